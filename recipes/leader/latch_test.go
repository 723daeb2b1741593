package leader_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/testing/zktest"
)

// recorder is a Listener that records what it hears.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) IsLeader()  { r.mu.Lock(); r.got = append(r.got, "leader"); r.mu.Unlock() }
func (r *recorder) NotLeader() { r.mu.Lock(); r.got = append(r.got, "not"); r.mu.Unlock() }
func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func startLatch(t testing.TB, l *leader.Latch) {
	t.Helper()
	t.Cleanup(func() { l.Close() })
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
}

// Curator's LeaderLatch through a short disconnection of its leader
// (testSessionErrorPolicy): NotLeader at SUSPENDED, then IsLeader again on
// the same node (same fencing token) once reconnected; the other latch
// never leads meanwhile.
func TestLatchKeepsItsPlaceThroughABlip(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	a, _ := leader.NewLatch(testenv.Client(t, px.Addr()), path, "a")
	b, _ := leader.NewLatch(testenv.Client(t, testenv.Shared().ConnectString()), path, "b")
	ra, rb := &recorder{}, &recorder{}
	a.AddListener(ra)
	b.AddListener(rb)
	startLatch(t, a)
	first, err := a.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	startLatch(t, b)
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { ps, _ := a.Participants(ctx); return len(ps) == 2 })
	node := a.Node()
	tok, err := a.FencingToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	px.Drop() // the connection drops; the session lives
	<-first.Done()
	if !causeIs(first, curator.ErrLockLost) {
		t.Fatalf("cause %v", context.Cause(first))
	}
	again, err := a.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.Node() != node {
		t.Fatalf("a leads again on %s, it led on %s", a.Node(), node)
	}
	if tok2, err := a.FencingToken(ctx); err != nil || tok2 != tok {
		t.Fatalf("token %d (%v), was %d", tok2, err, tok)
	}
	if again.Err() != nil || b.HasLeadership() {
		t.Fatal("two leaders, or none")
	}
	testenv.WaitFor(t, testenv.WaitShort, "a's listener told", func() bool { return len(ra.events()) == 3 })
	if got := ra.events(); !slices.Equal(got, []string{"leader", "not", "leader"}) {
		t.Fatalf("a's listener heard %v", got)
	}
	if got := rb.events(); len(got) != 0 {
		t.Fatalf("b's listener heard %v", got)
	}
}

// Close modes (Curator's testCallbackNotifyLeader, testCallbackDontNotify):
// NOTIFY_LEADER tells a leading latch's listeners NotLeader on Close;
// SILENT does not; a non-leader hears nothing either way. A listener may
// close its own latch.
func TestLatchCloseModes(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := testenv.Client(t, testenv.Shared().ConnectString())
	for _, mode := range []leader.CloseMode{leader.CloseSilent, leader.CloseNotifyLeader} {
		path := testenv.Path(t, "/leader")
		a, _ := leader.NewLatch(c, path, "a", leader.WithCloseMode(mode))
		b, _ := leader.NewLatch(c, path, "b", leader.WithCloseMode(mode))
		ra, rb := &recorder{}, &recorder{}
		a.AddListener(ra)
		b.AddListener(rb)
		startLatch(t, a)
		if _, err := a.Await(ctx); err != nil {
			t.Fatal(err)
		}
		startLatch(t, b)
		testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { ps, _ := a.Participants(ctx); return len(ps) == 2 })
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		want := []string{"leader"}
		if mode == leader.CloseNotifyLeader {
			want = append(want, "not")
		}
		if got := ra.events(); !slices.Equal(got, want) {
			t.Errorf("%v: the leader's listener heard %v, want %v", mode, got, want)
		}
		if _, err := b.Await(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Await(ctx); !errors.Is(err, curator.ErrClosed) {
			t.Errorf("Await after Close: %v", err)
		}
	}

	// A listener that closes its latch (Curator's testCallbackSanity).
	path := testenv.Path(t, "/leader")
	l, _ := leader.NewLatch(c, path, "x", leader.WithCloseMode(leader.CloseNotifyLeader))
	closed := make(chan error, 1)
	l.AddListener(leader.ListenerFuncs{OnLeader: func() { closed <- l.Close() }})
	startLatch(t, l)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
}

// Many latches (Curator's testBasic with 10): they lead one at a time, in
// the order they started, each closing after its turn.
func TestLatchesLeadInOrder(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	c := testenv.Client(t, testenv.Shared().ConnectString())
	var ls []*leader.Latch
	for i := range 10 {
		l, _ := leader.NewLatch(c, path, string(rune('a'+i)))
		startLatch(t, l)
		testenv.WaitFor(t, testenv.WaitShort, "in line", func() bool { return l.Node() != "" })
		ls = append(ls, l)
	}
	for i, l := range ls {
		if _, err := l.Await(ctx); err != nil {
			t.Fatal(err)
		}
		for j, o := range ls[i+1:] {
			if o.HasLeadership() {
				t.Fatalf("latch %d leads with %d", i+1+j, i)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// doneAsked is a context that tells when Done is first asked for: by then
// Await has read the latch's state and holds the channel of its next
// change.
type doneAsked struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (d *doneAsked) Done() <-chan struct{} {
	d.once.Do(func() { close(d.asked) })
	return d.Context.Done()
}

// Await before Start waits for Start; a Close instead ends it with
// ErrClosed (a latch closed before it was started has no owner goroutine
// to publish the change).
func TestLatchAwaitBeforeStartEndsOnClose(t *testing.T) {
	l, err := leader.NewLatch(testenv.Client(t, testenv.Shared().ConnectString()), testenv.Path(t, "/leader"), "a")
	if err != nil {
		t.Fatal(err)
	}
	ctx := &doneAsked{Context: testenv.Ctx(t, testenv.WaitShort), asked: make(chan struct{})}
	done := make(chan error, 1)
	go func() { _, err := l.Await(ctx); done <- err }()
	<-ctx.asked
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, curator.ErrClosed) {
		t.Fatalf("Await across Close before Start: %v, want ErrClosed", err)
	}
}

// A latch whose session the client declared lost (disconnected, the
// session timeout past since its last answered request was sent) takes part again with a new node, and deletes its
// old one first: the server keeps the old session until it expires it,
// and the old node, left in line, would keep everyone behind it waiting
// that long (Curator's reset deletes it too, CURATOR-696). Here b holds,
// a waits behind it; the server keeps a's session 10 s, a declares it
// lost after 1 s.
func TestLatchDeletesTheNodeOfASessionItGaveUp(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	op := testenv.Client(t, testenv.Shared().ConnectString())
	b, _ := leader.NewLatch(op, path, "b")
	startLatch(t, b)
	if _, err := b.Await(ctx); err != nil {
		t.Fatal(err)
	}
	nodes := make(chan string, 4)
	c := testenv.Client(t, px.Addr(), framework.WithSessionTimeout(10*time.Second), framework.WithSessionExpirationPercent(10))
	a, _ := leader.NewLatch(c, path, "a", leader.WithOnEnqueue(func(node string) { nodes <- node }))
	startLatch(t, a)
	old := <-nodes
	px.Refuse(true)
	px.Drop()
	testenv.WaitFor(t, testenv.WaitShort, "a's session declared lost", c.Session().Lost)
	px.Heal()
	<-nodes // a's new node
	ok, _, err := op.Exists(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Fatalf("a queued again with its old node %s still in line", old)
	}
}

// A listener added after Close starts nothing (the latch's goroutines have
// all ended) and is never called. (Counted by name: the test's client has
// goroutines of its own that come and go.)
func TestLatchListenerAfterCloseStartsNothing(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	l, err := leader.NewLatch(c, testenv.Path(t, "/leader"), "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	before := testenv.GoroutinesMadeBy("recipes/leader.newDispatcher")
	r := &recorder{}
	remove := l.AddListener(r)
	if n := testenv.GoroutinesMadeBy("recipes/leader.newDispatcher"); n != before {
		t.Fatalf("listener goroutines: %d after AddListener on a closed latch, %d before", n, before)
	}
	remove()
	if got := r.events(); len(got) != 0 {
		t.Fatalf("a listener added after Close heard %v", got)
	}
}

// A term lost to a suspension ends its hold's monitor: a latch that loses
// and regains leadership again and again in one long session keeps the
// monitor of its current term alone, not one more per term lost.
func TestLatchLostTermsLeaveNoMonitor(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	a, _ := leader.NewLatch(testenv.Client(t, px.Addr()), testenv.Path(t, "/leader"), "a")
	startLatch(t, a)
	term, err := a.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := driver.Holdings() // a's term's among them
	for range 3 {
		px.Drop() // suspended: the term is lost; the session lives
		testenv.Recv(t, term.Done(), testenv.WaitShort, "the term lost to the suspension")
		if term, err = a.Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, testenv.WaitShort, "the lost terms' monitors ended", func() bool { return driver.Holdings() == base })
}

// A term lost (its node deleted) whose loss event the owner has not
// handled when Close comes: the owner ends with Close and never handles
// it, so Close tells NotLeader itself, whatever the close mode, and waits
// for the term's watcher. Before, listeners heard IsLeader and never
// NotLeader, and Close returned with the watcher still running.
func TestLatchTermLostJustBeforeClose(t *testing.T) {
	ended, proceed := make(chan struct{}), make(chan struct{})
	t.Cleanup(leader.SetTermEndedHook(func() { // set before any latch starts
		select {
		case ended <- struct{}{}:
		case <-time.After(testenv.WaitLong):
			return
		}
		select {
		case <-proceed:
		case <-time.After(testenv.WaitLong):
		}
	}))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := testenv.Client(t, testenv.Shared().ConnectString())
	admin := testenv.Client(t, testenv.Shared().ConnectString())
	for _, mode := range []leader.CloseMode{leader.CloseSilent, leader.CloseNotifyLeader} {
		l, err := leader.NewLatch(c, testenv.Path(t, "/leader"), "a", leader.WithCloseMode(mode))
		if err != nil {
			t.Fatal(err)
		}
		r := &recorder{}
		l.AddListener(r)
		startLatch(t, l)
		if _, err := l.Await(ctx); err != nil {
			t.Fatal(err)
		}
		if err := admin.Delete(ctx, l.Node()); err != nil { // the term is lost
			t.Fatal(err)
		}
		testenv.Recv(t, ended, testenv.WaitShort, "the term's watcher seeing the term end") // its loss event is not sent yet
		closed := make(chan error, 1)
		go func() { closed <- l.Close() }()
		testenv.WaitFor(t, testenv.WaitShort, "the listener to hear NotLeader", func() bool {
			return slices.Equal(r.events(), []string{"leader", "not"})
		})
		select {
		case err := <-closed:
			t.Fatalf("%v: Close returned (%v) with the term's watcher still running", mode, err)
		default:
		}
		proceed <- struct{}{}
		if err := testenv.Recv(t, closed, testenv.WaitShort, "Close"); err != nil {
			t.Fatalf("%v: Close: %v", mode, err)
		}
		if got := r.events(); !slices.Equal(got, []string{"leader", "not"}) {
			t.Errorf("%v: the listener heard %v, want [leader not]", mode, got)
		}
	}
}

// Await once the latch's client is closed returns an error wrapping
// curator.ErrClosed at once: an Await waiting when the client closes, and
// one made after, on a latch that led. (Before, both waited for their ctx:
// the latch kept trying to take part on a closed client.)
func TestLatchAwaitAfterClientClose(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	ca := testenv.Client(t, testenv.Shared().ConnectString())
	cb := testenv.Client(t, testenv.Shared().ConnectString())
	a, _ := leader.NewLatch(ca, path, "a")
	b, _ := leader.NewLatch(cb, path, "b")
	startLatch(t, a)
	if _, err := a.Await(ctx); err != nil {
		t.Fatal(err)
	}
	startLatch(t, b)
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { ps, _ := a.Participants(ctx); return len(ps) == 2 })
	bctx := &doneAsked{Context: ctx, asked: make(chan struct{})}
	waiting := make(chan error, 1)
	go func() { _, err := b.Await(bctx); waiting <- err }()
	<-bctx.asked // b's Await waits
	if err := cb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, waiting, testenv.WaitShort, "b's waiting Await to end on its client's Close"); !errors.Is(err, curator.ErrClosed) {
		t.Fatalf("b's waiting Await across its client's Close: %v, want ErrClosed", err)
	}
	if err := ca.Close(); err != nil {
		t.Fatal(err)
	}
	after := make(chan error, 1)
	go func() { _, err := a.Await(ctx); after <- err }()
	if err := testenv.Recv(t, after, testenv.WaitShort, "a's Await after its client's Close"); !errors.Is(err, curator.ErrClosed) {
		t.Fatalf("a's Await after its client's Close: %v, want ErrClosed", err)
	}
	for _, l := range []*leader.Latch{a, b} {
		if err := l.Close(); err != nil {
			t.Errorf("%s's Close after its client's: %v", l.ID(), err)
		}
	}
}

// Close of a latch whose client never connected (nothing listens at its
// address) returns at once, its node's create in flight or not: no create
// can have reached a server, so nothing is left to delete. (Before, Close
// waited for the create to give up: the clean-up timeout, 5 s.)
func TestLatchCloseOnANeverConnectedClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := testenv.ClientNoWait(t, addr)
	l, err := leader.NewLatch(c, testenv.Path(t, "/leader"), "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the latch's create in flight", func() bool { return inStack("leader.(*engine).campaign", "(*Client).CreateNode") })
	start := time.Now()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Close took %v with a client that never connected, want under 1s", d)
	}
	if _, err := l.Await(testenv.Ctx(t, testenv.WaitShort)); !errors.Is(err, curator.ErrClosed) {
		t.Fatalf("Await after Close: %v", err)
	}
}

// inStack reports whether some goroutine's stack holds every one of frames.
func inStack(frames ...string) bool {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		all := true
		for _, f := range frames {
			all = all && strings.Contains(g, f)
		}
		if all {
			return true
		}
	}
	return false
}
