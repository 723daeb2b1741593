package driver_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// An acquisition whose node is its path's only child right after its
// create (the parent read in the same round trip, which also marks the
// path) holds without reading the queue: a create, a getData behind it, no
// getChildren. The next one of the same driver makes no read at all: its
// sequence follows its last hold's, and the mark is intact (the gap rule).
// Once a reading shows others, the driver asks for no parent read (it
// would be wasted).
func TestAloneHoldsWithoutReading(t *testing.T) {
	s := newCreateScene(t, "/alone")
	px, c, other, ctx, path := s.px, s.c, s.other, s.ctx, s.path
	d := newDriver(t, c, path)
	reads := func() int { return queueReads(px) }
	parentReads := s.parentReads

	for i, want := range []int{1, 0, 0} {
		px.ResetCounts()
		ct, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, p := reads(), parentReads(); r != 0 || p != want {
			t.Errorf("uncontended acquisition %d: %d reads of the queue, %d parent reads; want 0 and %d", i, r, p, want)
		}
		if w := px.WatchRequests(zktest.OpGetData); w != want {
			t.Errorf("uncontended acquisition %d: %d watched getData (the mark); want %d", i, w, want)
		}
		if err := ct.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Someone else holds: the first Try reads the queue (its sequence does
	// not follow), the next decides on that reading, asks for no parent
	// read, and reads the queue before it answers ErrLocked.
	held, err := newDriver(t, other, path).Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	px.ResetCounts()
	if _, err := d.Acquire(ctx, nil, &driver.WaitOptions{Try: true}); err == nil {
		t.Fatal("Try while another holds: held")
	}
	if r, p := reads(), parentReads(); r != 1 || p != 0 {
		t.Errorf("Try after another's create: %d reads of the queue, %d parent reads; want 1 and 0", r, p)
	}
	px.ResetCounts()
	if _, err := d.Acquire(ctx, nil, &driver.WaitOptions{Try: true}); err == nil {
		t.Fatal("Try while another holds: held")
	}
	if r, p := reads(), parentReads(); r != 1 || p != 0 {
		t.Errorf("after a busy reading: %d reads of the queue, %d parent reads; want 1 and 0", r, p)
	}
	if err := held.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}

// persistentPath makes the lock path a persistent node, which the server
// never reaps when it empties (a container would be, within a second on
// zktest's servers), and removes it at the end.
func persistentPath(t *testing.T, c *framework.Client, path string) {
	t.Helper()
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, path, nil, framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), path, framework.WithIgnoreMissing()) })
}

// The drivers of one client share one mark on a lock path (issue 16: the
// 10,000 waiters of one process each made a watched getData of the path
// behind its create, and a goroutine and a stack for it): a driver with
// none adopts the client's intact mark and asks for no new one; a driver
// of another client does not see it.
func TestDriversOfOneClientShareTheMark(t *testing.T) {
	s := newCreateScene(t, "/sharemark")
	px, c, other, ctx, path := s.px, s.c, s.other, s.ctx, s.path

	first, err := newDriver(t, c, path).Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := px.WatchRequests(zktest.OpGetData); w != 1 {
		t.Fatalf("the first driver: %d watched getData (the mark), want 1", w)
	}
	if c.MarkOn(path) == nil {
		t.Fatal("the client has no mark on the path after the first create")
	}
	if other.MarkOn(path) != nil {
		t.Fatal("another client sees the mark")
	}
	px.ResetCounts()
	second := newDriver(t, c, path)
	waiter, err := second.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w, p := px.WatchRequests(zktest.OpGetData), px.Requests(zktest.OpGetData)+px.Requests(zktest.OpExists); w != 0 || p != 1 {
		t.Errorf("a second driver's create: %d watched getData, %d parent reads; want 0 and 1 (a plain exists: it is alone?)", w, p)
	}
	if err := first.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := waiter.Wait(ctx, &driver.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waiter.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}

// Contenders of one client created at once on one path (a thousand
// waiters queued together) make one parent read between them, the first's
// mark, not one each (each also a goroutine to send it): a create made
// while another of the process is in flight there reads no parent. Those
// take the client's mark at their first reading of the queue, so the gap
// rule still serves them after.
func TestConcurrentCreatesMarkOnce(t *testing.T) {
	s := newCreateScene(t, "/markonce")
	first, second := newDriver(t, s.c, s.path), newDriver(t, s.c, s.path)
	secondGap := make(chan bool, 4)
	done := s.holdCreate(first, func(by *driver.Driver, gap bool) {
		if by == second {
			secondGap <- gap
		}
	})
	w, err := second.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.parentReads(); p != 0 {
		t.Errorf("a create while another of the client's is in flight: %d parent reads, want 0", p)
	}
	if s.c.MarkOn(s.path) != nil {
		t.Fatal("a mark before the first create (the premise)")
	}
	held := done()
	if n, p := s.px.WatchRequests(zktest.OpGetData), s.parentReads(); n != 1 || p != 1 {
		t.Errorf("both creates: %d watched getData, %d parent reads; want 1 and 1 (the first's mark)", n, p)
	}
	if s.c.MarkOn(s.path) == nil {
		t.Fatal("no mark after the first create")
	}

	// The second (behind the first, sequence 1) reads the queue under the
	// client's mark, is handed the lock, and releases: its driver's next
	// create follows that reading, so the gap rule may place it.
	wDone := waitOn(s.ctx, w)
	gone(t, s.ctx, held)
	heldThenGone(t, s.ctx, w, wDone)
	<-secondGap // the second's first create
	next, err := second.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !<-secondGap {
		t.Error("the second driver's next create: the gap rule did not look at it (its reading was not marked)")
	}
	gone(t, s.ctx, next)
}

// The same holds for drivers that do not hand off (the read-write lock's,
// the semaphore's leases): a create while another of the client's is in
// flight on the path asks for no parent stat; one alone does.
func TestConcurrentCreatesReadNoParent(t *testing.T) {
	s := newCreateScene(t, "/noparent")
	first, second := s.twoLeases(s.c), s.twoLeases(s.c)
	done := s.holdCreate(first, nil)
	ct, err := second.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.parentReads() + queueReads(s.px); p != 0 {
		t.Errorf("a create while another of the client's is in flight: %d parent reads, want 0", p)
	}
	held := done()
	if p := s.parentReads() + queueReads(s.px); p != 1 {
		t.Errorf("the first create (alone when it was decided): %d parent reads, want 1 (its listing)", p)
	}
	gone(t, s.ctx, held, ct)
}

// A create of another client in flight does not count: its reading could
// not be shared, so a driver that does not hand off still lists the queue
// behind its create, and decides with no read of its own (issue 16: the
// read-write lock's readers on four sessions of one process each made a
// read a round trip after their create, once the process's creates were
// counted together; 2 round trips for a read, not 3).
func TestCreatesOfOtherClientsDoNotCrowd(t *testing.T) {
	s := newCreateScene(t, "/notcrowded")
	done := s.holdCreate(s.twoLeases(s.other), nil)
	// The create is made and its reply held: a listing behind it is sent
	// by then; a read of its own would wait for the reply.
	held := s.px.HoldReply(zktest.OpCreate)
	type result struct {
		c   *driver.Contender
		err error
	}
	acquired, d := make(chan result, 1), s.twoLeases(s.c)
	go func() {
		ct, err := d.Acquire(s.ctx, nil, &driver.WaitOptions{})
		acquired <- result{ct, err}
	}()
	if err := held.Wait(s.ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the queue listed behind the create", func() bool { return queueReads(s.px) == 1 })
	held.Release()
	r := testenv.Recv(t, acquired, testenv.WaitShort, "the acquisition")
	if r.err != nil {
		t.Fatal(r.err)
	}
	ct := r.c
	if r, p := queueReads(s.px), s.parentReads(); r != 1 || p != 0 {
		t.Errorf("an acquisition while another client's create is in flight: %d reads of the queue, %d parent stats; want 1 (its listing) and 0", r, p)
	}
	gone(t, s.ctx, done(), ct)
}

// One mark read at a time, not one create: a create while others are in
// flight, none of them reading a mark, reads one (a path whose creates
// overlap without pause would else never be marked again once a
// reconnection spent its mark). It reads no parent stat (not alone).
func TestMarkReadWhileOthersCreate(t *testing.T) {
	s := newCreateScene(t, "/markcrowd")
	done := s.holdCreate(s.twoLeases(s.c), nil) // reads no mark
	ct, err := newDriver(t, s.c, s.path).Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, p := s.px.WatchRequests(zktest.OpGetData), s.parentReads(); n != 1 || p != 1 {
		t.Errorf("a create while another (with no mark read) is in flight: %d watched getData, %d parent reads; want 1 and 1 (the mark)", n, p)
	}
	if s.c.MarkOn(s.path) == nil {
		t.Error("no mark after it")
	}
	gone(t, s.ctx, done(), ct)
}

// createScene is a client through a proxy that counts its requests,
// another client, and a persistent lock path.
type createScene struct {
	t     *testing.T
	px    *zktest.Proxy
	c     *framework.Client
	other *framework.Client
	ctx   context.Context
	path  string
}

func newCreateScene(t *testing.T, root string) *createScene {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	s := &createScene{t: t, px: px, c: testenv.Client(t, px.Addr()), other: testenv.Client(t, testenv.Shared().ConnectString()),
		ctx: testenv.Ctx(t, testenv.WaitShort), path: testenv.Path(t, root)}
	persistentPath(t, s.other, s.path)
	return s
}

// twoLeases returns a driver of c on the scene's path that does not hand
// off: two holders, "lease-" nodes.
func (s *createScene) twoLeases(c *framework.Client) *driver.Driver {
	d, err := driver.New(c, s.path, "lease-", driver.MaxLeases(2))
	if err != nil {
		s.t.Fatal(err)
	}
	return d
}

// parentReads counts the reads a create may send behind it.
func (s *createScene) parentReads() int {
	return s.px.Requests(zktest.OpExists) + s.px.Requests(zktest.OpGetData)
}

// holdCreate starts an Enqueue by d and holds it in the create hook, once
// its parent read is decided and it is registered in flight, before it is
// sent; other creates go to also (nil: nothing). done lets it go and
// returns its contender.
func (s *createScene) holdCreate(d *driver.Driver, also func(by *driver.Driver, gap bool)) (done func() *driver.Contender) {
	t := s.t
	in, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(driver.SetCreateHook(func(by *driver.Driver, gap bool) {
		if by == d {
			close(in)
			<-release
		} else if also != nil {
			also(by, gap)
		}
	}))
	type result struct {
		c   *driver.Contender
		err error
	}
	out := make(chan result, 1)
	go func() {
		c, err := d.Enqueue(s.ctx, nil)
		out <- result{c, err}
	}()
	select {
	case <-in:
	case <-s.ctx.Done():
		t.Fatal("the held create never started")
	}
	return func() *driver.Contender {
		close(release)
		select {
		case r := <-out:
			if r.err != nil {
				t.Fatal(r.err)
			}
			return r.c
		case <-s.ctx.Done():
			t.Fatal("the held create never returned")
			return nil
		}
	}
}
