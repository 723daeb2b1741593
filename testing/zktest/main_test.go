package zktest_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/internal/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client is a go-zookeeper connection that records every event.
type client struct {
	*zk.Conn
	events <-chan zk.Event

	mu      sync.Mutex
	log     []zk.Event
	changed chan struct{}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// connect opens a go-zk session to servers (comma separated) and waits
// until it has a session. It is closed at the end of the test.
func connect(t *testing.T, servers string, sessionTimeout time.Duration) *client {
	t.Helper()
	c := &client{changed: make(chan struct{})}
	conn, events, err := zk.Connect(strings.Split(servers, ","), sessionTimeout,
		zk.WithLogger(nopLogger{}), zk.WithLogInfo(false),
		zk.WithEventCallback(func(e zk.Event) {
			c.mu.Lock()
			c.log = append(c.log, e)
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	c.Conn, c.events = conn, events
	t.Cleanup(c.close)
	c.waitEvent(t, 0, testenv.WaitShort, func(e zk.Event) bool { return e.State == zk.StateHasSession })
	return c
}

// close closes the connection and waits for its goroutines to finish.
func (c *client) close() {
	c.Conn.Close()
	for range c.events {
	}
}

// mark returns the position in the event log, for waitEvent.
func (c *client) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.log)
}

// waitEvent waits for an event at or after position from that matches ok
// and returns the position after it.
func (c *client) waitEvent(t *testing.T, from int, timeout time.Duration, ok func(zk.Event) bool) int {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.log); i++ {
			if ok(c.log[i]) {
				c.mu.Unlock()
				return i + 1
			}
		}
		from = len(c.log)
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			c.mu.Lock()
			states := []string{}
			for _, e := range c.log {
				states = append(states, e.Type.String()+"/"+e.State.String())
			}
			c.mu.Unlock()
			t.Fatalf("no matching event within %v; events: %v", timeout, states)
		}
	}
}

func isState(s zk.State) func(zk.Event) bool {
	return func(e zk.Event) bool { return e.Type == zk.EventSession && e.State == s }
}

func containsID(ids []int64, id int64) bool { return slices.Contains(ids, id) }
