package framework_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

// shared is the server of the tests that inject no fault; each of them
// works in a namespace of its own. Fault tests start their own server or
// put a proxy in front of this one.
var shared *zktest.Server

// withServer runs the tests between starting the shared server and
// stopping it, so that goleak looks for goroutines after both.
type withServer struct{ m *testing.M }

func (w withServer) Run() int {
	srv, err := zktest.NewServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "framework tests need ZooKeeper:", err)
		return 1
	}
	shared = srv
	defer srv.Close()
	return w.m.Run()
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withServer{m})
}

// Timeouts: generous, as CI is a loaded 2-core machine running -race.
const (
	waitLong  = 60 * time.Second // for anything that involves a server start or a session expiry
	waitShort = 20 * time.Second // for anything else
)

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// uniq returns name plus a random suffix, for namespaces and paths that
// no other test (or run) uses.
func uniq(name string) string {
	var b [4]byte
	rand.Read(b[:])
	return name + "-" + hex.EncodeToString(b[:])
}

// patient retries every 50 ms for 30 s: the retry loop of tests that must
// ride out a fault rather than give up.
type patient struct{}

func (patient) Next(_ int, elapsed time.Duration) (time.Duration, bool) {
	return 50 * time.Millisecond, elapsed < 30*time.Second
}

// newClient makes a client (closed at cleanup) and waits until it is
// connected. Defaults: 2 s session, 5 s connection timeout, patient retries;
// opts come after them and win.
func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	c := newClientNoWait(t, connect, opts...)
	if err := c.BlockUntilConnected(testCtx(t, waitShort)); err != nil {
		t.Fatalf("BlockUntilConnected: %v", err)
	}
	return c
}

func newClientNoWait(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	all := append([]framework.Option{
		framework.WithSessionTimeout(2 * time.Second),
		framework.WithConnectionTimeout(5 * time.Second),
		framework.WithRetryPolicy(patient{}),
	}, opts...)
	c, err := framework.New(connect, all...)
	if err != nil {
		t.Fatalf("New(%q): %v", connect, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// startServer starts a local server of the test's own (it may be stopped
// and started), closed at cleanup.
func startServer(t testing.TB, opts ...zktest.Option) *zktest.Server {
	t.Helper()
	s, err := zktest.NewServer(opts...)
	if err != nil {
		t.Fatalf("starting ZooKeeper: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// eventually polls cond every 25 ms until it returns nil or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so within %v: %v", what, d, err)
		}
		time.Sleep(25 * time.Millisecond) // polling interval, not synchronization
	}
}

// newRecordedClient is newClientNoWait with a log of every connection
// state from the first: the client dials only once the listener is in.
func newRecordedClient(t testing.TB, connect string, opts ...framework.Option) (*framework.Client, *stateLog) {
	t.Helper()
	gate := make(chan struct{})
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		<-gate
		return net.DialTimeout(network, addr, timeout)
	}
	c := newClientNoWait(t, connect, append(opts, framework.WithDialer(dial))...)
	log := recordStates(t, c)
	close(gate)
	return c, log
}

// startProxyFor puts a proxy (closed at cleanup) in front of the shared
// server.
func startProxyFor(t testing.TB) *zktest.Proxy {
	t.Helper()
	return zktest.StartProxy(t, shared.Addr())
}

// stateLog records every connection state a client posts, in order.
type stateLog struct {
	mu      sync.Mutex
	states  []framework.State
	changed chan struct{}
}

func recordStates(t testing.TB, c *framework.Client) *stateLog {
	l := &stateLog{changed: make(chan struct{})}
	remove := c.AddListener(func(s framework.State) {
		l.mu.Lock()
		l.states = append(l.states, s)
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
	})
	t.Cleanup(remove)
	return l
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
