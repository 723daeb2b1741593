package driver_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// newDriver returns a mutex driver ("lock-", first holds) on path.
func newDriver(t testing.TB, c *framework.Client, path string) *driver.Driver {
	t.Helper()
	d, err := driver.New(c, path, "lock-", driver.MaxLeases(1))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitOn starts Wait of c on a goroutine; its outcome comes on the channel.
func waitOn(ctx context.Context, c *driver.Contender) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- c.Wait(ctx, &driver.WaitOptions{}) }()
	return ch
}

// heldWithWaiters takes the lock with d, then queues n waiters of d behind
// it, each waiting on a goroutine of its own (done[i] tells its outcome);
// each, if not nil, runs once waiter i is waiting.
func heldWithWaiters(t *testing.T, ctx context.Context, d *driver.Driver, n int, each func(i int, w *driver.Contender)) (holder *driver.Contender, waiters []*driver.Contender, done []<-chan error) {
	t.Helper()
	holder, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waiters, done = make([]*driver.Contender, n), make([]<-chan error, n)
	for i := range waiters {
		if waiters[i], err = d.Enqueue(ctx, nil); err != nil {
			t.Fatal(err)
		}
		done[i] = waitOn(ctx, waiters[i])
		if each != nil {
			each(i, waiters[i])
		}
	}
	return holder, waiters, done
}

// parks counts each contender's parks (driver.SetParkHook: every watch and
// mark of its wait set) from now to the end of the test. Call countParks
// before the test's clients: the hook is then restored once they are
// closed.
type parks struct {
	mu sync.Mutex
	n  map[*driver.Contender]int
}

func countParks(t *testing.T) *parks {
	p := &parks{n: map[*driver.Contender]int{}}
	t.Cleanup(driver.SetParkHook(func(c *driver.Contender) {
		p.mu.Lock()
		p.n[c]++
		p.mu.Unlock()
	}))
	return p
}

func (p *parks) of(c *driver.Contender) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[c]
}

// waitParked waits until c has parked n times in all.
func (p *parks) waitParked(t *testing.T, c *driver.Contender, n int, what string) {
	t.Helper()
	testenv.WaitFor(t, testenv.WaitShort, what, func() bool { return p.of(c) >= n })
}

// enqueueParked enqueues a contender of d and starts its wait, returning
// it once parked (what), with the channel of the wait's outcome.
func (p *parks) enqueueParked(t *testing.T, ctx context.Context, d *driver.Driver, what string) (*driver.Contender, <-chan error) {
	t.Helper()
	c, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := waitOn(ctx, c)
	p.waitParked(t, c, 1, what)
	return c, done
}

// requests counts what the proxy forwarded that a waiter may send.
func requests(px *zktest.Proxy) (reads, exists, getData int) {
	return queueReads(px), px.Requests(zktest.OpExists), px.Requests(zktest.OpGetData)
}

// waitCounting starts w's wait with px's counts reset and returns once it
// has parked, with what px forwarded until then (its counts reset again).
func waitCounting(t *testing.T, ctx context.Context, pk *parks, px *zktest.Proxy, w *driver.Contender, what string) (done <-chan error, reads, exists, getData int) {
	t.Helper()
	px.ResetCounts()
	done = waitOn(ctx, w)
	pk.waitParked(t, w, 1, what)
	reads, exists, getData = requests(px)
	px.ResetCounts()
	return done, reads, exists, getData
}

// awayWhile cuts c's connection through px (no new one until it is done),
// waits until c knows itself disconnected, makes the changes of during,
// then resets px's counts and lets c connect again (its session lives).
func awayWhile(t *testing.T, px *zktest.Proxy, c *framework.Client, during func()) {
	t.Helper()
	px.Refuse(true)
	px.Drop()
	testenv.WaitFor(t, testenv.WaitShort, "the client disconnected", func() bool { return !c.Connected() })
	during()
	px.ResetCounts()
	px.Heal()
}

// queueReads counts the reads of the queue (getChildren, with or without
// the parent's stat) that the proxy forwarded.
func queueReads(px *zktest.Proxy) int {
	return px.Requests(zktest.OpGetChildren2) + px.Requests(zktest.OpGetChildren)
}

// A queue served in order in one process hands the lock from waiter to
// waiter without a single request: the notification alone, whatever the
// queue's length (issue 16). Nothing of the handoff's bookkeeping stays
// once nobody waits.
func TestHandoffReadsNothing(t *testing.T) {
	pk := countParks(t)
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	d := newDriver(t, c, testenv.Path(t, "/handoff"))
	if !driver.HandoffOn(d) {
		t.Fatal("the mutex driver does not hand off")
	}
	const n = 30
	holder, waiters, done := heldWithWaiters(t, ctx, d, n, nil)
	for i, w := range waiters {
		pk.waitParked(t, w, 1, fmt.Sprintf("waiter %d parked", i))
	}
	px.ResetCounts()
	if err := holder.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	// Read the queue beside the proxy, which counts the waiters' requests.
	direct := testenv.Client(t, testenv.Shared().ConnectString())
	for i, w := range waiters {
		if err := <-done[i]; err != nil {
			t.Fatalf("waiter %d: %v", i, err)
		}
		// It holds: its node is first on the server (all before it gone).
		if err := testenv.IsFirst(direct, w.Node()); err != nil {
			t.Fatalf("waiter %d: %v", i, err)
		}
		for j := i + 1; j < n; j++ { // in order: no later waiter holds yet
			select {
			case err := <-done[j]:
				t.Fatalf("waiter %d returned (%v) while waiter %d held", j, err, i)
			default:
			}
		}
		if err := w.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if reads, exists, getData := requests(px); reads+exists+getData != 0 {
		t.Errorf("%d handoffs sent %d reads of the queue, %d exists, %d getData; want none", n, reads, exists, getData)
	}
	testenv.WaitFor(t, testenv.WaitShort, "no handoff key left", func() bool { return driver.HandoffKeys() == 0 })
}

// The names a waiter will ask about are kept while it waits, however few
// waiters are left: each of these waiters reads the queue on its own (one
// after another), so each reading holds every contender before it, and
// when its turn comes the names of the first are old. Before, names were
// dropped by count alone (here the newest 2, or twice the waiters left):
// the last waiters found the first names forgotten and each read the
// queue again (bench's 10,000 waiters: 2,494 reads of thousands of names
// in one run).
func TestHandoffKeepsTheNamesItsWaitersNeed(t *testing.T) {
	t.Cleanup(driver.SetGoneMin(2))
	pk := countParks(t)
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	d := newDriver(t, c, testenv.Path(t, "/handoffkeep"))
	const n = 16
	holder, waiters, done := heldWithWaiters(t, ctx, d, n, func(i int, w *driver.Contender) {
		pk.waitParked(t, w, 1, fmt.Sprintf("waiter %d parked", i)) // one at a time: a reading each
	})
	px.ResetCounts()
	if err := holder.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	for i, w := range waiters {
		if err := <-done[i]; err != nil {
			t.Fatalf("waiter %d: %v", i, err)
		}
		if err := w.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if reads, exists, _ := requests(px); reads+exists != 0 {
		t.Errorf("%d handoffs sent %d reads of the queue and %d exists; want none", n, reads, exists)
	}
	testenv.WaitFor(t, testenv.WaitShort, "no handoff key left", func() bool { return driver.HandoffKeys() == 0 })
}

// A waiter whose own node someone deletes while it waits must not take
// the lock when its predecessor goes, though every contender before it is
// gone: its successor, which then waits on the same predecessor, takes it,
// alone (the handoff's proof, step 4).
func TestHandoffNotWithoutOurNode(t *testing.T) {
	pk := countParks(t)
	c := testenv.Client(t, testenv.Shared().ConnectString())
	op := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	d := newDriver(t, c, testenv.Path(t, "/handoff"))
	holder, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Delete(ctx)
	wDone, sDone := waitOn(ctx, w), waitOn(ctx, s)
	pk.waitParked(t, w, 1, "w waiting, its node marked")
	pk.waitParked(t, s, 1, "s waiting")
	if err := op.Delete(ctx, w.Node()); err != nil { // an operator
		t.Fatal(err)
	}
	// s's predecessor went: it reads the queue again and waits on the holder.
	pk.waitParked(t, s, 2, "the successor waiting on the holder")
	if err := holder.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-wDone; !errors.Is(err, curator.ErrNodeVanished) {
		t.Fatalf("the waiter whose node was deleted: %v, want ErrNodeVanished", err)
	}
	if err := <-sDone; err != nil {
		t.Fatalf("the successor: %v, want it to hold", err)
	}
}

// A waiter whose predecessor gives up (another process's waiter) must not
// take the lock past a holder still there, which this process never saw
// go: it reads the queue again and waits on the holder.
func TestHandoffNotPastALiveHolder(t *testing.T) {
	pk := countParks(t)
	c := testenv.Client(t, testenv.Shared().ConnectString())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/handoff")
	od := newDriver(t, other, path)
	od.OtherProcess()
	holder, err := od.Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := od.Enqueue(ctx, nil) // another process's waiter
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, c, path)
	w, wDone := pk.enqueueParked(t, ctx, d, "w watching x")
	defer w.Delete(ctx)
	if err := x.Delete(ctx); err != nil { // x gives up
		t.Fatal(err)
	}
	pk.waitParked(t, w, 2, "w waiting on the holder")
	select {
	case err := <-wDone:
		t.Fatalf("w returned (%v) while the holder holds", err)
	default:
	}
	if err := holder.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-wDone; err != nil {
		t.Fatalf("w once the holder went: %v", err)
	}
}

// The handoff is off where a node can be made with a chosen sequence (the
// read-write lock's downgrade, CURATOR-621) or where more than the first
// holds, and a driver that hands off refuses to make such a node.
func TestHandoffOnlyForTheMutex(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := testenv.Path(t, "/handoff")
	rw, err := driver.New(c, path, "__WRIT__", driver.MaxLeases(1), "__READ__", "__WRIT__")
	if err != nil {
		t.Fatal(err)
	}
	two, err := driver.New(c, path, "lease-", driver.MaxLeases(2))
	if err != nil {
		t.Fatal(err)
	}
	if driver.HandoffOn(rw) || driver.HandoffOn(two) {
		t.Fatalf("handoff on for the read-write lock (%v) or two holders (%v)", driver.HandoffOn(rw), driver.HandoffOn(two))
	}
	m := newDriver(t, c, path)
	if _, err := m.EnqueueAs(ctx, "lock-0000000007", nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Fatalf("EnqueueAs on a driver that hands off: %v, want ErrInvalidArgument", err)
	}
}

// A path contended without pause by several goroutines of one client keeps
// its handoff entry for good (someone always waits): the gone names it
// keeps stay bounded, not one more per acquisition; and the waiters that
// ask about a name no longer kept read the queue again, still one holder
// at a time.
func TestHandoffForgetsOldGoneNames(t *testing.T) {
	const keep, goroutines, rounds = 8, 4, 60
	t.Cleanup(driver.SetGoneMin(keep))
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/goneforget")
	var holders, most, kept atomic.Int32
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := newDriver(t, c, path)
			for range rounds {
				ct, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				if h := holders.Add(1); h > most.Load() {
					most.Store(h)
				}
				if n := int32(driver.HandoffGone()); n > kept.Load() {
					kept.Store(n)
				}
				holders.Add(-1)
				if err := ct.Delete(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Errorf("%d holders at once, want 1", m)
	}
	// The entry keeps max(keep, 2 x waiters) names, and those gone since
	// its oldest waiter joined (a waiter here waits for at most the other
	// goroutines' holds); a few more may be counted while one is recorded
	// (HandoffGone reads between calls).
	if k := kept.Load(); k > keep+2*goroutines {
		t.Errorf("the handoff kept %d gone names after %d acquisitions, want at most %d", k, goroutines*rounds, keep+2*goroutines)
	}
	if k := kept.Load(); k < keep {
		t.Errorf("the handoff kept at most %d gone names, want it to reach %d (the premise: the entry lives on)", k, keep)
	}
	if n := driver.HandoffKeys(); n != 0 {
		t.Errorf("%d handoff keys once nobody waits, want 0", n)
	}
}

// threeQueued queues three contenders on path, each on a client of its
// own, in this process or (others) each in a process of its own: the
// first holds.
func threeQueued(t *testing.T, ctx context.Context, path string, others bool) (holder, x, y *driver.Contender) {
	t.Helper()
	return queueOne(t, ctx, path, others), queueOne(t, ctx, path, others), queueOne(t, ctx, path, others)
}

// queueOne queues a contender on path on a client of its own, in this
// process or (other) in a process of its own.
func queueOne(t *testing.T, ctx context.Context, path string, other bool) *driver.Contender {
	t.Helper()
	d := newDriver(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
	if other {
		d.OtherProcess()
	}
	ct, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

// enqueueVia queues a contender on path on a new client through px; it is
// deleted when the test ends.
func enqueueVia(t *testing.T, ctx context.Context, px *zktest.Proxy, path string) *driver.Contender {
	t.Helper()
	w, err := newDriver(t, testenv.Client(t, px.Addr()), path).Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Delete(context.Background()) })
	return w
}

// A waiter whose predecessor has another client's contender before it
// (another process's, or another session's of this process: what a client
// knows is its own, handoff.go 3.) cannot learn of that one's going, so it
// reads the queue when its predecessor goes, as Curator does, and sets no
// mark on its node, which would buy nothing (handoff.go, 5.). The queue:
// holder, x, y (other clients), w (ours, through a counting proxy). w
// watches y alone, sleeps through the holder's and x's going, and when y
// goes reads the queue once and holds. (Sharing the records between the
// clients of a process, and a look-ahead at x, saved that read after y's
// going, at a cost in client CPU that K processes of one session each did
// not pay back: issue 38, 2.)
func TestHandoffAcrossProcessesReadsOnce(t *testing.T) {
	readsOnceAfterOthers(t, true)
}

// TestHandoffRecordsPerClient is TestHandoffAcrossProcessesReadsOnce with
// the others being other sessions of this process.
func TestHandoffRecordsPerClient(t *testing.T) {
	readsOnceAfterOthers(t, false)
}

func readsOnceAfterOthers(t *testing.T, otherProcess bool) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/handoff")
	pk := countParks(t)
	holder, x, y := threeQueued(t, ctx, path, otherProcess)
	xDone, yDone := waitOn(ctx, x), waitOn(ctx, y)
	pk.waitParked(t, y, 1, "y waiting on x")
	w := enqueueVia(t, ctx, px, path)
	wDone, reads, exists, getData := waitCounting(t, ctx, pk, px, w, "w waiting on y")
	if reads != 0 || exists != 0 || getData != 1 {
		t.Errorf("w's wait sent %d reads of the queue, %d exists, %d getData; want 0, 0, 1 (its create listed the queue; y's watch, no mark)", reads, exists, getData)
	}
	for _, step := range []struct {
		gone *driver.Contender
		next <-chan error
	}{{holder, xDone}, {x, yDone}} {
		if err := step.gone.Delete(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-step.next; err != nil {
			t.Fatal(err)
		}
		testenv.NotYet(t, wDone, "w while another holds")
	}
	if n := pk.of(w); n != 1 {
		t.Errorf("w parked %d times before y went, want once", n)
	}
	px.ResetCounts()
	if err := y.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-wDone; err != nil {
		t.Fatalf("w once y went: %v", err)
	}
	if reads, exists, getData := requests(px); reads != 1 || exists != 0 || getData != 0 {
		t.Errorf("w's hold once y went sent %d reads of the queue, %d exists, %d getData; want 1, 0, 0", reads, exists, getData)
	}
}

// A protected name's going, seen through one client, is known to that
// client alone (handoff.go, 3.). Any other name is known gone to none, not
// even the client that saw it go: a foreign contender's plain
// "lock-0000000002" may be one an operator makes again by hand.
func TestHandoffGoneNamesAcrossClients(t *testing.T) {
	path := testenv.Path(t, "/handoff")
	a := newDriver(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
	b := newDriver(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
	defer a.JoinHandoff()()
	protected := framework.ProtectedName(framework.NewProtectedID(), "lock-0000000001")
	plain := "lock-0000000002"
	a.SawGone(1, protected)
	a.SawGone(1, plain)
	for _, c := range []struct {
		d     *driver.Driver
		name  string
		known bool
	}{{a, protected, true}, {a, plain, false}, {b, protected, false}, {b, plain, false}} {
		if got := c.d.KnowsGone(c.name); got != c.known {
			t.Errorf("client %s knows %q gone: %v, want %v", map[bool]string{true: "a", false: "b"}[c.d == a], c.name, got, c.known)
		}
	}
}

// A mark claims one connection's order only (handoff.go, 4.): on a new
// connection the server replays the events of what changed meanwhile in
// no such order. A waiter whose predecessor went while it was
// disconnected checks its own node with a request; and if its node went
// too, it does not hold, whichever event the server replays first.
func TestHandoffMarkNotAcrossConnections(t *testing.T) {
	for _, ownGone := range []bool{false, true} {
		t.Run(fmt.Sprintf("own node deleted=%v", ownGone), func(t *testing.T) {
			pk := countParks(t)
			px := zktest.StartProxy(t, testenv.Shared().Addr())
			op := testenv.Client(t, testenv.Shared().ConnectString())
			ctx := testenv.Ctx(t, testenv.WaitLong)
			path := testenv.Path(t, "/handoff")
			holder, err := newDriver(t, op, path).Acquire(ctx, nil, &driver.WaitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c := testenv.Client(t, px.Addr())
			w, err := newDriver(t, c, path).Enqueue(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Delete(ctx)
			wDone := waitOn(ctx, w)
			pk.waitParked(t, w, 1, "w waiting on the holder, its node marked")
			awayWhile(t, px, c, func() {
				if ownGone {
					if err := op.Delete(ctx, w.Node()); err != nil { // an operator
						t.Fatal(err)
					}
				}
				gone(t, ctx, holder)
			})
			err = <-wDone
			if ownGone {
				if !errors.Is(err, curator.ErrNodeVanished) {
					t.Fatalf("w, its node deleted: %v, want ErrNodeVanished", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("w once the holder went: %v", err)
			}
			if _, exists, _ := requests(px); exists != 1 {
				t.Errorf("w held after %d exists of its node, want 1: a mark of the connection before does not count", exists)
			}
		})
	}
}

// A session lost while a waiter waits on its predecessor is not that
// predecessor's deletion (the watch ends with NotWatching, not
// NodeDeleted). Were it taken for one, the client would know a live holder
// gone, and a later waiter of the client, in the next session, would hold
// beside it. The queue: holder, p (other clients), w (ours, through a
// proxy); the holder goes, p holds, w's session expires; then q (another
// client, never waiting) and w3 (ours, in the new session) queue behind
// p, and q gives up.
func TestHandoffNotOnASessionLost(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/handoff")
	pk := countParks(t)
	holder, p := queueOne(t, ctx, path, false), queueOne(t, ctx, path, false)
	pDone := waitOn(ctx, p)
	c := testenv.Client(t, px.Addr())
	d := newDriver(t, c, path)
	_, wDone := pk.enqueueParked(t, ctx, d, "w waiting on p")
	if err := holder.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-pDone; err != nil {
		t.Fatal(err)
	}
	defer d.JoinHandoff()() // another waiter of the client keeps what it knows
	if err := zktest.ExpireSession(ctx, px, testenv.Shared(), c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	if err := <-wDone; !errors.Is(err, curator.ErrNodeVanished) {
		t.Fatalf("w, its session expired: %v, want ErrNodeVanished", err)
	}
	if d.KnowsGone(p.Name()) {
		t.Errorf("p holds, yet the process knows it gone")
	}

	q := queueOne(t, ctx, path, false) // a contender that never waits
	w3, w3Done := pk.enqueueParked(t, ctx, d, "w3 waiting on q")
	defer w3.Delete(ctx)
	if err := q.Delete(ctx); err != nil { // q gives up
		t.Fatal(err)
	}
	testenv.NotYet(t, w3Done, "w3 while p holds")
	if err := p.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-w3Done; err != nil {
		t.Fatalf("w3 once p went: %v", err)
	}
}

// A contender whose session the client declared lost while its read of
// the queue was in flight does not hold, even when that read (sent again
// in the next session, before the server expired the old one) still lists
// its node first: Wait fails with ErrNodeVanished wrapping ErrSessionLost,
// as its contract says, instead of handing the caller a holding already
// lost.
func TestWaitNotHeldOnceTheSessionIsLost(t *testing.T) {
	later := testenv.RestoreLater(t) // hooks restored after the clients are closed
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/handoff")
	holder, err := newDriver(t, testenv.Client(t, testenv.Shared().ConnectString()), path).Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Declared lost 1 s after its last answered request was sent; the server keeps the
	// session 10 s.
	c := testenv.Client(t, px.Addr(), framework.WithSessionTimeout(10*time.Second), framework.WithSessionExpirationPercent(10))
	w, err := newDriver(t, c, path).Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Delete(ctx)
	driver.Unlisted(w) // its first decision reads the queue (the read the hook interrupts)
	old := c.Session()
	var once sync.Once
	later(driver.SetReadHook(func(context.Context) {
		once.Do(func() {
			px.Refuse(true)
			px.Drop()
			testenv.WaitFor(t, testenv.WaitShort, "w's session declared lost", old.Lost)
			if err := holder.Delete(ctx); err != nil {
				t.Error(err)
			}
			px.Heal()
			testenv.WaitFor(t, testenv.WaitShort, "a new session", func() bool { return c.Connected() && c.Session() != old })
		})
	}))
	err = w.Wait(ctx, &driver.WaitOptions{})
	if !errors.Is(err, curator.ErrNodeVanished) || !errors.Is(err, curator.ErrSessionLost) {
		t.Fatalf("w, its session lost during its read: %v, want ErrNodeVanished and ErrSessionLost", err)
	}
}

// A name recorded gone on another incarnation of the path is not gone
// for a reading of this one: the path, a container, may have been reaped
// and made again, and a protected create retried after its first node
// went keeps its UUID, so the same name may be back, holding (handoff.go,
// 3.). Here N is first in line while the process holds a record of its
// name's going on an earlier incarnation (czxid one less than the path's
// now); w waits behind X. When X goes, w must not hold: it reads the
// queue again, and waits on N. TestHandoffLateRecordOfAReapedPath makes
// such a record for real.
func TestHandoffStaleGoneRecord(t *testing.T) {
	pk := countParks(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/handoff")
	n, x := queueOne(t, ctx, path, true), queueOne(t, ctx, path, true)
	d := newDriver(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
	defer d.JoinHandoff()() // the process's entry for the path lives on, as a waiter's would
	_, st, err := d.Client().Children(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	d.SawGone(st.Czxid-1, n.Name()) // an earlier node of that name, gone before the path was made again
	w, done := pk.enqueueParked(t, ctx, d, "w waiting behind x")
	if err := x.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "w to wait again, or to hold", func() bool { return pk.of(w) >= 2 || len(done) > 0 })
	select {
	case err := <-done:
		t.Fatalf("w holds (%v) while %s, first in line, holds: the record of its name's going older than w's reading was believed", err, n.Name())
	default:
	}
	if err := n.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, done, testenv.WaitShort, "w to hold once n went"); err != nil {
		t.Fatal(err)
	}
}
