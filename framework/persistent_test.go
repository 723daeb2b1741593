package framework_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// events collects a persistent watch's events.
type events struct {
	mu  sync.Mutex
	evs []framework.Event
	ch  chan struct{}
}

func newEvents() *events { return &events{ch: make(chan struct{}, 1)} }

func (e *events) fn(ev framework.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
	select {
	case e.ch <- struct{}{}:
	default:
	}
}

func (e *events) get() []framework.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]framework.Event(nil), e.evs...)
}

// waitFor waits until the events delivered are want (type and path), in
// order, then clears them.
func (e *events) waitFor(t *testing.T, want ...string) {
	t.Helper()
	testenv.Eventually(t, testenv.WaitLong, "persistent watch events", func() error {
		got := e.get()
		var s []string
		for _, ev := range got {
			s = append(s, ev.Type.String()+" "+ev.Path)
		}
		if fmt.Sprint(s) != fmt.Sprint(want) {
			return fmt.Errorf("events %q, want %q", s, want)
		}
		return nil
	})
	e.mu.Lock()
	e.evs = nil
	e.mu.Unlock()
}

// serverWatches reports the sessions the server holds a data-table watch
// (a persistent one included) on the server path for.
func serverWatches(t *testing.T, srv *zktest.Server, full string) int {
	t.Helper()
	m, err := srv.WatchesByPath()
	if err != nil {
		t.Fatal(err)
	}
	return len(m[full])
}

func TestPersistentRecursiveEvents(t *testing.T) {
	ns := testenv.Uniq("pwrec")
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	ev := newEvents()
	w, err := c.AddWatch(ctx, "/t", true, ev.fn)
	if err != nil {
		t.Fatal(err)
	}
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/t"); n != 1 {
		t.Fatalf("server holds %d watches on the path, want 1", n)
	}
	mustCreate(t, c, "/t", "/t/a")
	if _, err := c.Set(ctx, "/t/a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "/t/a/b")
	if err := c.Delete(ctx, "/t/a/b"); err != nil {
		t.Fatal(err)
	}
	ev.waitFor(t, "NodeCreated /t", "NodeCreated /t/a", "NodeDataChanged /t/a", "NodeCreated /t/a/b", "NodeDeleted /t/a/b")
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/t"); n != 0 {
		t.Fatalf("server holds %d watches on the path after Stop, want 0", n)
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	// Nothing after Stop: a one-shot watch set after the change below
	// proves the change's event was read.
	_, _, ow, err := c.GetW(ctx, "/t")
	if err != nil {
		t.Fatal(err)
	}
	defer ow.Stop()
	mustCreate(t, c, "/t/c")
	if _, err := c.Set(ctx, "/t", []byte("y")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ow, testenv.WaitLong)
	if got := ev.get(); len(got) != 0 {
		t.Fatalf("events after Stop: %v", got)
	}
}

func TestPersistentNonRecursive(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("pwone")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	ev := newEvents()
	w, err := c.AddWatch(ctx, "/n", false, ev.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop(ctx)
	mustCreate(t, c, "/n", "/n/k")
	if _, err := c.Set(ctx, "/n/k", []byte("x")); err != nil { // a child's change: not this watch's
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/n", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ev.waitFor(t, "NodeCreated /n", "NodeChildrenChanged /n", "NodeDataChanged /n")
}

func mustCreate(t *testing.T, c *framework.Client, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := c.Create(testenv.Ctx(t, testenv.WaitLong), p, nil); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
}

// A resumed connection cannot replay to a persistent watch what changed
// while disconnected: the watch says so (EventMissed), is set again
// (SetWatches2) and goes on.
func TestPersistentResumedReportsMissed(t *testing.T) {
	p := startProxyFor(t)
	ns := testenv.Uniq("pwresume")
	c := newClient(t, p.Addr(), framework.WithNamespace(ns), framework.WithSessionTimeout(10*time.Second))
	other := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	mustCreate(t, other, "/r", "/r/stay")
	ev := newEvents()
	w, err := c.AddWatch(ctx, "/r", true, ev.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop(ctx)
	// A one-shot watch too, of another node and of the watched one.
	_, _, ow, err := c.GetW(ctx, "/r/stay")
	if err != nil {
		t.Fatal(err)
	}
	defer ow.Stop()
	sess := c.Session()
	p.Refuse(true)
	p.Drop()
	testenv.WaitFor(t, testenv.WaitLong, "disconnected", func() bool { return !c.Connected() })
	mustCreate(t, other, "/r/new") // while disconnected: no event for it, ever
	p.Refuse(false)
	testenv.WaitFor(t, testenv.WaitLong, "reconnected", c.Connected)
	if c.Session() != sess {
		t.Fatal("session not resumed")
	}
	ev.waitFor(t, "Missed /r")
	mustCreate(t, other, "/r/after")
	if _, err := other.Set(ctx, "/r/stay", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ev.waitFor(t, "NodeCreated /r/after", "NodeDataChanged /r/stay")
	if e := waitEvent(t, ow, testenv.WaitLong); e.Type != framework.EventNodeDataChanged {
		t.Fatalf("one-shot event %v", e)
	}
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/r"); n != 1 {
		t.Fatalf("server holds %d watches on the path after the resume, want 1", n)
	}
}

// A lost session ends a persistent watch (the server's is gone): the
// owner is told with curator.ErrSessionLost.
func TestPersistentEndsWithSession(t *testing.T) {
	p := startProxyFor(t)
	c := newClient(t, p.Addr(), framework.WithNamespace(testenv.Uniq("pwlost")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	ev := newEvents()
	w, err := c.AddWatch(ctx, "/l", true, ev.fn)
	if err != nil {
		t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, p, testenv.Shared(), c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.WaitLong, "NotWatching", func() error {
		got := ev.get()
		if len(got) == 0 {
			return errors.New("no event")
		}
		last := got[len(got)-1]
		if last.Type != framework.EventNotWatching || !errors.Is(last.Err, curator.ErrSessionLost) {
			return fmt.Errorf("events %v", got)
		}
		return nil
	})
	if err := w.Stop(ctx); err != nil {
		t.Fatalf("Stop after the session loss: %v", err)
	}
	// A new watch in the new session works.
	ev2 := newEvents()
	w2, err := c.AddWatch(ctx, "/l", true, ev2.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop(ctx)
	mustCreate(t, c, "/l")
	ev2.waitFor(t, "NodeCreated /l")
}

// ZOOKEEPER-4466: the server keeps one watch mode per session and path. A
// one-shot watch and a persistent one on the same path, in one client,
// both keep working: the one-shot read of a path with a persistent watch
// sets no server watch (it would make the persistent one one-shot), and
// is fired by the persistent watch's events; removing the persistent
// watch (removeWatches Any removes every watch of the path) fires the
// one-shot ones, after which they are set on the server again.
func TestPersistentAndOneShotOnOnePath(t *testing.T) {
	ns := testenv.Uniq("pw4466")
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	mustCreate(t, c, "/x", "/y")

	// Persistent first, then one-shot on the same path.
	ev := newEvents()
	w, err := c.AddWatch(ctx, "/x", true, ev.fn)
	if err != nil {
		t.Fatal(err)
	}
	_, _, ow, err := c.GetW(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/x", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if e := waitEvent(t, ow, testenv.WaitLong); e.Type != framework.EventNodeDataChanged {
		t.Fatalf("one-shot event %v", e)
	}
	if _, err := c.Set(ctx, "/x", []byte("2")); err != nil { // the persistent watch outlived the one-shot fire
		t.Fatal(err)
	}
	ev.waitFor(t, "NodeDataChanged /x", "NodeDataChanged /x")
	// A child watch beside the recursive one is the server's (another
	// table); removing the persistent watch removes it too: it fires.
	_, _, cw, err := c.ChildrenW(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	_, _, dw, err := c.GetW(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, cw, testenv.WaitLong)
	waitEvent(t, dw, testenv.WaitLong)
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/x"); n != 0 {
		t.Fatalf("server holds %d watches on /x after Stop, want 0", n)
	}
	// One-shot watches after the removal are set on the server again.
	_, _, dw, err = c.GetW(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/x"); n != 1 {
		t.Fatalf("server holds %d watches on /x after a GetW, want 1", n)
	}
	if _, err := c.Set(ctx, "/x", []byte("3")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, dw, testenv.WaitLong)
	if got := ev.get(); len(got) != 0 {
		t.Fatalf("persistent events after Stop: %v", got)
	}

	// One-shot first, then persistent (non-recursive) on the same path.
	_, _, ow, err = c.GetW(ctx, "/y")
	if err != nil {
		t.Fatal(err)
	}
	ev = newEvents()
	w, err = c.AddWatch(ctx, "/y", false, ev.fn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/y", []byte("1")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ow, testenv.WaitLong)
	_, _, ow, err = c.GetW(ctx, "/y") // no server watch: the persistent one covers it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/y", []byte("2")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ow, testenv.WaitLong)
	if _, err := c.Set(ctx, "/y", []byte("3")); err != nil {
		t.Fatal(err)
	}
	ev.waitFor(t, "NodeDataChanged /y", "NodeDataChanged /y", "NodeDataChanged /y")
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/y"); n != 0 {
		t.Fatalf("server holds %d watches on /y after Stop, want 0", n)
	}
	if armed, waiters := c.WatchStats(); waiters != 0 {
		t.Fatalf("WatchStats = %d armed, %d waiters; want no waiter", armed, waiters)
	}
}

func TestPersistentBadInput(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("pwbad")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	nop := func(framework.Event) {}
	if _, err := c.AddWatch(ctx, "/a", true, nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil fn: %v", err)
	}
	if _, err := c.AddWatch(ctx, "a", true, nop); !errors.Is(err, curator.ErrInvalidPath) {
		t.Errorf("relative path: %v", err)
	}
	//lint:ignore SA1012 a nil context is the bad input tested
	if _, err := c.AddWatch(nil, "/a", true, nop); !errors.Is(err, curator.ErrInvalidArgument) { //nolint:staticcheck
		t.Errorf("nil context: %v", err)
	}
	w, err := c.AddWatch(ctx, "/a", true, nop)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddWatch(ctx, "/a", false, nop); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("other mode on the same path: %v", err)
	}
	//lint:ignore SA1012 a nil context is the bad input tested
	if err := w.Stop(nil); !errors.Is(err, curator.ErrInvalidArgument) { //nolint:staticcheck
		t.Errorf("Stop(nil): %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddWatch(ctx, "/b", true, nop); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if err := w.Stop(context.Background()); err != nil {
		t.Errorf("Stop after Close: %v", err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "delivery goroutines gone", func() bool {
		return testenv.GoroutinesMadeBy("framework.(*PersistentWatch).push") == 0
	})
	if !errors.Is(framework.CodeError(-6), curator.ErrUnimplemented) {
		t.Errorf("UNIMPLEMENTED maps to %v", framework.CodeError(-6))
	}
}

// Watches of one mode on one path share the server's; the last Stop
// removes it.
func TestPersistentShared(t *testing.T) {
	ns := testenv.Uniq("pwshare")
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	e1, e2 := newEvents(), newEvents()
	w1, err := c.AddWatch(ctx, "/s", true, e1.fn)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := c.AddWatch(ctx, "/s", true, e2.fn)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "/s")
	e1.waitFor(t, "NodeCreated /s")
	e2.waitFor(t, "NodeCreated /s")
	if err := w1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/s"); n != 1 {
		t.Fatalf("server holds %d watches with one owner left, want 1", n)
	}
	mustCreate(t, c, "/s/k")
	e2.waitFor(t, "NodeCreated /s/k")
	if err := w2.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/s"); n != 0 {
		t.Fatalf("server holds %d watches after the last Stop, want 0", n)
	}
	if got := e1.get(); len(got) != 0 {
		t.Fatalf("events after Stop: %v", got)
	}
}

func TestGetMany(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("getmany")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	mustCreate(t, c, "/a", "/b")
	if _, err := c.Set(ctx, "/b", []byte("bee")); err != nil {
		t.Fatal(err)
	}
	res, err := c.GetMany(ctx, []string{"/a", "/missing", "/b"})
	if err != nil {
		t.Fatal(err)
	}
	_, sb, err := c.Get(ctx, "/b")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0].Err != nil || res[0].Stat.NumChildren != 0 ||
		!errors.Is(res[1].Err, zk.ErrNoNode) ||
		res[2].Err != nil || string(res[2].Data) != "bee" || *res[2].Stat != *sb {
		t.Fatalf("GetMany = %+v", res)
	}
	if _, err := c.GetMany(ctx, nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("no path: %v", err)
	}
	if _, err := c.GetMany(ctx, []string{"/a", "b"}); !errors.Is(err, curator.ErrInvalidPath) {
		t.Errorf("bad path: %v", err)
	}
}

// An own request whose reply is lost with its connection (addWatch,
// removeWatches: the server did it) fails as a connection loss inside
// the retry loop and is sent again on the resumed connection: AddWatch
// and Stop succeed, and the server ends with the watch, then without it.
func TestPersistentRepliesLost(t *testing.T) {
	p := startProxyFor(t)
	ns := testenv.Uniq("pwlost")
	c := newClient(t, p.Addr(), framework.WithNamespace(ns), framework.WithSessionTimeout(10*time.Second))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	sess := c.Session()
	ev := newEvents()
	held := p.HoldReply(zktest.OpAddWatch)
	type added struct {
		w   *framework.PersistentWatch
		err error
	}
	done := make(chan added, 1)
	go func() {
		w, err := c.AddWatch(ctx, "/h", true, ev.fn)
		done <- added{w, err}
	}()
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	held.Drop()
	a := testenv.Recv(t, done, testenv.WaitLong, "AddWatch")
	if a.err != nil {
		t.Fatalf("AddWatch across a lost reply: %v", a.err)
	}
	if c.Session() != sess {
		t.Fatal("session not resumed")
	}
	mustCreate(t, c, "/h")
	testenv.Eventually(t, testenv.WaitLong, "the creation's event", func() error {
		for _, e := range ev.get() {
			if e.Type == framework.EventNodeCreated && e.Path == "/h" {
				return nil
			}
		}
		return fmt.Errorf("events %v", ev.get())
	})
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/h"); n != 1 {
		t.Fatalf("server holds %d watches, want 1", n)
	}
	held = p.HoldReply(zktest.OpRemoveWatches)
	stopped := make(chan error, 1)
	go func() { stopped <- a.w.Stop(ctx) }()
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	held.Drop()
	if err := testenv.Recv(t, stopped, testenv.WaitLong, "Stop"); err != nil {
		t.Fatalf("Stop across a lost reply: %v", err)
	}
	if n := serverWatches(t, testenv.Shared(), "/"+ns+"/h"); n != 0 {
		t.Fatalf("server holds %d watches after Stop, want 0", n)
	}
}

// A consumer that falls behind costs bounded memory: past the bound the
// waiting events are replaced by one EventMissed, and the events after
// it are delivered.
func TestPersistentSlowConsumerBounded(t *testing.T) {
	later := testenv.RestoreLater(t)
	later(framework.SetMaxPersistentQueue(4))
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("pwslow")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	mustCreate(t, c, "/q")
	block := make(chan struct{})
	ev := newEvents()
	first := true
	w, err := c.AddWatch(ctx, "/q", true, func(e framework.Event) {
		if first {
			first = false
			<-block
		}
		ev.fn(e)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop(ctx)
	for i := range 10 {
		if _, err := c.Set(ctx, "/q", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// The tenth change's event is queued once a one-shot watch set after
	// it has fired: the client reads events in order.
	_, _, ow, err := c.ExistsW(ctx, "/q/x")
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "/q/x")
	waitEvent(t, ow, testenv.WaitLong)
	close(block)
	// The first event was being delivered; of the ten behind it the queue
	// (4) overflowed twice, the second time at the ninth: Missed, then
	// the ninth, the tenth and the creation.
	ev.waitFor(t, "NodeDataChanged /q", "Missed /q", "NodeDataChanged /q", "NodeDataChanged /q", "NodeCreated /q/x")
}

func TestParseMultiReadMalformed(t *testing.T) {
	good := []byte{
		0, 0, 0, 4, 0, 255, 255, 255, 255, // header: getData, not done, err -1
		0, 0, 0, 1, 'x', // data
	}
	good = append(good, make([]byte, 68)...)                       // stat
	good = append(good, 255, 255, 255, 255, 1, 255, 255, 255, 255) // done
	if res, err := framework.ParseMultiRead(good, 1); err != nil || string(res[0].Data) != "x" {
		t.Fatalf("good reply: %v, %v", res, err)
	}
	for n := range len(good) {
		if _, err := framework.ParseMultiRead(good[:n], 1); err == nil {
			t.Errorf("reply cut at %d bytes: no error", n)
		}
	}
	if _, err := framework.ParseMultiRead(good, 2); err == nil {
		t.Error("one result for two reads: no error")
	}
}
