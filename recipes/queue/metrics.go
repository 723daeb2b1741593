package queue

import (
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
)

// The queue's metrics (framework's package documentation lists them):
// curator.queue.depth (each consumer's last listing), curator.queue.oldest.age
// (the age of each item taken: the oldest due one), curator.queue.items by
// curator.queue.op (put, consumed).
type metrics struct{ t *telemetry.Queue }

func newMetrics(c *framework.Client, path string) *metrics {
	return &metrics{telemetry.ForClient(c).Queue(path)}
}

func (m *metrics) put(n int)   { m.t.Put(n) }
func (m *metrics) depth(n int) { m.t.Depth(n) }
func (m *metrics) consumed()   { m.t.Consumed() }
func (m *metrics) close()      { m.t.Closed() }
func (m *metrics) taken(st *framework.Stat) {
	m.t.Taken(time.Since(time.UnixMilli(st.Ctime)))
}
