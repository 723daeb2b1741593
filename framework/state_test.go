package framework_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// A server stopped and started again within the session timeout: the
// client is SUSPENDED, then RECONNECTED to the same session, which is never
// lost.
func TestStatesServerStopStart(t *testing.T) {
	s := zktest.StartServer(t)
	// The session must outlive the server's absence, JVM start included.
	c, log := newRecordedClient(t, s.ConnectString(), framework.WithSessionTimeout(30*time.Second))
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	sess := c.Session()
	if sess == nil {
		t.Fatal("connected without a session")
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended)
	select {
	case <-sess.Suspended():
	default:
		t.Error("Session.Suspended not closed while SUSPENDED")
	}
	if c.Connected() {
		t.Error("Connected() while the server is down")
	}

	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitLong, framework.StateConnected, framework.StateSuspended, framework.StateReconnected)
	if got := c.Session(); got != sess {
		t.Fatalf("session after reconnection = %v, want the same %x", got, sess.ID())
	}
	if sess.Lost() {
		t.Fatal("session lost although the server kept it")
	}
	select {
	case <-sess.Suspended():
		t.Error("a new Suspended channel is closed after RECONNECTED")
	default:
	}
	if _, _, err := c.Exists(testenv.Ctx(t, testenv.WaitShort), "/"); err != nil {
		t.Fatalf("Exists after reconnection: %v", err)
	}
	if got := log.get(); len(got) != 3 {
		t.Fatalf("connection states %v, want exactly CONNECTED SUSPENDED RECONNECTED", got)
	}
	if c.State() != framework.StateReconnected {
		t.Fatalf("State() = %v", c.State())
	}
}

// A real server-side expiry (a partition through a proxy): LOST, then
// RECONNECTED in a new session; the old Session's Done is closed and a
// watch set in it ends with EventNotWatching / ErrSessionLost.
func TestStatesSessionExpiry(t *testing.T) {
	// The server caps sessions at 2 s while the client asks for 30 s, so
	// the server expires the session long before the client would declare
	// it lost by itself: this test sees the server's expiry.
	s := zktest.StartServer(t, zktest.WithConfig("maxSessionTimeout", "2000"))
	p := zktest.StartProxy(t, s.Addr())
	c, log := newRecordedClient(t, p.Addr(), framework.WithSessionTimeout(30*time.Second))
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/watched", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW(ctx, "/watched")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	old := c.Session()

	if err := zktest.ExpireSession(ctx, p, s, old.ID()); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitLong, framework.StateConnected, framework.StateSuspended, framework.StateLost, framework.StateReconnected)

	select {
	case <-old.Done():
	default:
		t.Fatal("the expired session's Done is not closed")
	}
	ev := waitEvent(t, w, testenv.WaitShort)
	if ev.Type != framework.EventNotWatching || !errors.Is(ev.Err, curator.ErrSessionLost) || ev.Path != "/watched" {
		t.Fatalf("watch event %+v, want NotWatching /watched with ErrSessionLost", ev)
	}
	now := c.Session()
	if now == nil || now.ID() == old.ID() || now.Lost() {
		t.Fatalf("session after expiry %v, want a new live one (old %x)", now, old.ID())
	}
	if _, _, err := c.Get(ctx, "/watched"); err != nil {
		t.Fatalf("Get in the new session: %v", err)
	}
	if armed, waiters := c.WatchStats(); armed != 0 || waiters != 0 {
		t.Fatalf("WatchStats after expiry = %d armed, %d waiters; want 0, 0", armed, waiters)
	}
}

// The server is down for longer than the session timeout: the client
// cannot hear about an expiry, so it declares LOST itself; when the server
// is back it is RECONNECTED in a new session.
func TestStatesSimulatedLost(t *testing.T) {
	s := zktest.StartServer(t)
	c, log := newRecordedClient(t, s.ConnectString(), framework.WithSessionTimeout(time.Second))
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	old := c.Session()

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateLost)
	select {
	case <-old.Done():
	default:
		t.Fatal("LOST posted but the session's Done is not closed")
	}
	// Between LOST and the next connection, Session is the lost one (never
	// nil once connected: a caller's Session().ID() must not panic).
	if got := c.Session(); got != old || !errors.Is(got.Err(), curator.ErrSessionLost) {
		t.Fatalf("Session between LOST and the next connection = %v, want the lost one ending with ErrSessionLost", got)
	}
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err := c.BlockUntilConnected(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("BlockUntilConnected with the server down: %v, want DeadlineExceeded", err)
	}

	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitLong, framework.StateConnected, framework.StateSuspended, framework.StateLost, framework.StateReconnected)
	now := c.Session()
	if now == nil || now.ID() == old.ID() {
		t.Fatalf("session after LOST %v, want a new one (old %x)", now, old.ID())
	}
	if got := framework.SessionFor(c, old.ID()); !got.Lost() {
		t.Fatal("sessionFor(old id) is not lost")
	}
	if _, _, err := c.Exists(testenv.Ctx(t, testenv.WaitShort), "/"); err != nil {
		t.Fatalf("Exists in the new session: %v", err)
	}
	if got := log.get(); len(got) != 4 {
		t.Fatalf("connection states %v, want exactly CONNECTED SUSPENDED LOST RECONNECTED", got)
	}
}

// A create answered in a new session before the event goroutine has
// handled that session's event (it still holds the disconnection here; in
// production a busy event goroutine does) gets the new Session, live, not
// a lost stand-in: its node lives in the client's session.
func TestCreateInASessionNotHandledYet(t *testing.T) {
	release := make(chan struct{})
	var held atomic.Bool
	t.Cleanup(framework.SetHandleHook(func(st zk.State) { // restored once the client is closed
		if st == zk.StateDisconnected && held.CompareAndSwap(false, true) {
			<-release
		}
	}))
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	var releaseOnce sync.Once
	let := func() { releaseOnce.Do(func() { close(release) }) }
	defer let()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	parent := testenv.Path(t, "/sessionfor")
	if _, err := c.Create(ctx, parent, nil, framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	old := c.Session().ID()
	if err := zktest.ExpireSession(ctx, px, testenv.Shared(), old); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "go-zookeeper in a new session", func() bool {
		id := framework.ZKConn(c).SessionID()
		return id != 0 && id != old
	})
	if !held.Load() || c.Session().ID() != old || c.Session().Lost() {
		t.Fatal("the event goroutine handled the change already: the test holds nothing")
	}
	type result struct {
		n   framework.Created
		err error
	}
	done := make(chan result, 1)
	px.ResetCounts()
	go func() {
		n, err := c.CreateNode(ctx, parent+"/e", nil, framework.WithMode(framework.ModeEphemeral), framework.WithProtection())
		done <- result{n, err}
	}()
	testenv.WaitFor(t, testenv.WaitShort, "the create sent", func() bool { return px.Requests(zktest.OpCreate) > 0 })
	let()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.n.Session.Lost() || r.n.Session.ID() == old {
		t.Fatalf("the create's Session: id 0x%x, lost %v; want the new session, live", r.n.Session.ID(), r.n.Session.Lost())
	}
	if r.n.Session != c.Session() {
		t.Fatal("the create's Session is not the client's")
	}
}
