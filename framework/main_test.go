package framework_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// Tests that inject no fault share testenv.Shared(), each in a namespace
// of its own; fault tests start their own server or put a proxy in front
// of it.
func TestMain(m *testing.M) { testenv.Main(m) }

// newClient makes a client (closed at cleanup) that rides out faults rather
// than giving up, and waits until it is connected; opts win.
func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.Client(t, connect, patient(opts)...)
}

func newClientNoWait(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.ClientNoWait(t, connect, patient(opts)...)
}

func patient(opts []framework.Option) []framework.Option {
	return append([]framework.Option{framework.WithRetryPolicy(testenv.Patient{})}, opts...)
}

// newRecordedClient is newClientNoWait with a log of every connection
// state from the first (a WithListener listener).
func newRecordedClient(t testing.TB, connect string, opts ...framework.Option) (*framework.Client, *stateLog) {
	t.Helper()
	log := newStateLog()
	c := newClientNoWait(t, connect, append(opts, framework.WithListener(log.record))...)
	return c, log
}

// startProxyFor puts a proxy (closed at cleanup) in front of the shared
// server.
func startProxyFor(t testing.TB) *zktest.Proxy {
	t.Helper()
	return zktest.StartProxy(t, testenv.Shared().Addr())
}

// stateLog records every connection state a client posts, in order.
type stateLog struct {
	mu      sync.Mutex
	states  []framework.State
	changed chan struct{}
}

func newStateLog() *stateLog { return &stateLog{changed: make(chan struct{})} }

func (l *stateLog) record(s framework.State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.states = append(l.states, s)
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *stateLog) get() []framework.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.states)
}

// wait waits until the log holds want as its prefix (at least), and fails
// at once if what is recorded diverges from want.
func (l *stateLog) wait(t testing.TB, d time.Duration, want ...framework.State) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		l.mu.Lock()
		got, ch := slices.Clone(l.states), l.changed
		l.mu.Unlock()
		n := min(len(got), len(want))
		if !slices.Equal(got[:n], want[:n]) {
			t.Fatalf("connection states %v, want %v", got, want)
		}
		if len(got) >= len(want) {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("connection states %v after %v, want %v", got, d, want)
		}
	}
}

// waitEvent waits for w's one event.
func waitEvent(t testing.TB, w *framework.Watch, d time.Duration) framework.Event {
	t.Helper()
	select {
	case ev := <-w.C():
		return ev
	case <-time.After(d):
		t.Fatalf("no watch event within %v", d)
	}
	panic("unreachable")
}

func modeName(m framework.CreateMode) string {
	return map[framework.CreateMode]string{
		framework.ModePersistent:           "persistent",
		framework.ModeEphemeral:            "ephemeral",
		framework.ModePersistentSequential: "persistent-sequential",
		framework.ModeEphemeralSequential:  "ephemeral-sequential",
	}[m]
}
