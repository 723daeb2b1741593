package locks

import (
	"sync"

	"github.com/gocurator/curator/framework"
)

// Monitor watches a contender that holds (a lock, a lease): Lost is closed
// when the holding can no longer be relied on (its session is lost, or, with
// LoseOnSuspend, its connection is suspended), and then the node is deleted
// in the background (guaranteed), since it only blocks others. Stop ends the
// watch when the holder releases.
type Monitor struct {
	c      *Contender
	onLost func()
	lost   chan struct{}
	once   sync.Once // closes lost
	stop   chan struct{}
	halt   sync.Once // closes stop
	done   chan struct{}
}

// Monitor starts watching c; onLost, if not nil, runs once when the holding
// is lost (before the node's deletion is queued).
func (c *Contender) Monitor(policy SuspendPolicy, onLost func()) *Monitor {
	m := &Monitor{c: c, onLost: onLost, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	var susp <-chan struct{}
	if policy == LoseOnSuspend {
		susp = c.session.Suspended()
	}
	go func() {
		defer close(m.done)
		select {
		case <-m.stop:
			return
		case <-c.session.Done():
		case <-susp:
		}
		m.lose()
		c.d.client.DeleteInBackground(c.node, framework.IgnoreMissing())
	}()
	return m
}

// lose records the loss once: closes lost, then runs onLost. The release
// that finds the node gone calls it too, after Stop.
func (m *Monitor) lose() {
	m.once.Do(func() {
		close(m.lost)
		if m.onLost != nil {
			m.onLost()
		}
	})
}

// Lost returns a channel closed when the holding is lost.
func (m *Monitor) Lost() <-chan struct{} { return m.lost }

// IsLost reports whether the holding is lost.
func (m *Monitor) IsLost() bool {
	select {
	case <-m.lost:
		return true
	default:
		return false
	}
}

// Stop ends the watch and waits for it to end. It is safe to call from
// several goroutines at once, again, and on a nil or zero Monitor (never
// started: nothing to stop).
func (m *Monitor) Stop() {
	if m == nil || m.stop == nil {
		return
	}
	m.halt.Do(func() { close(m.stop) })
	<-m.done
}
