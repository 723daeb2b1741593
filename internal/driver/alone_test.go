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
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := testenv.Path(t, "/alone")
	d := newDriver(t, c, path)
	persistentPath(t, other, path)
	reads := func() int { return px.Requests(zktest.OpGetChildren2) + px.Requests(zktest.OpGetChildren) }
	parentReads := func() int { return px.Requests(zktest.OpExists) + px.Requests(zktest.OpGetData) }

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
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := testenv.Path(t, "/sharemark")
	persistentPath(t, other, path)

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
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := testenv.Path(t, "/markonce")
	persistentPath(t, other, path)
	parentReads := func() int { return px.Requests(zktest.OpExists) + px.Requests(zktest.OpGetData) }

	first, second := newDriver(t, c, path), newDriver(t, c, path)
	inFirst, release := make(chan struct{}), make(chan struct{})
	secondGap := make(chan bool, 4)
	t.Cleanup(driver.SetCreateHook(func(by *driver.Driver, gap bool) {
		switch by {
		case first:
			close(inFirst)
			<-release // its create is in flight (registered), not yet sent
		case second:
			secondGap <- gap
		}
	}))
	type result struct {
		c   *driver.Contender
		err error
	}
	firstDone := make(chan result, 1)
	go func() {
		ct, err := first.Enqueue(ctx, nil)
		firstDone <- result{ct, err}
	}()
	select {
	case <-inFirst:
	case <-ctx.Done():
		t.Fatal("the first create never started")
	}
	w, err := second.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := parentReads(); p != 0 {
		t.Errorf("a create while another of the client's is in flight: %d parent reads, want 0", p)
	}
	if c.MarkOn(path) != nil {
		t.Fatal("a mark before the first create (the premise)")
	}
	close(release)
	var r result
	select {
	case r = <-firstDone:
	case <-ctx.Done():
		t.Fatal("the first create never returned")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n, p := px.WatchRequests(zktest.OpGetData), parentReads(); n != 1 || p != 1 {
		t.Errorf("both creates: %d watched getData, %d parent reads; want 1 and 1 (the first's mark)", n, p)
	}
	if c.MarkOn(path) == nil {
		t.Fatal("no mark after the first create")
	}

	// The second (behind the first, sequence 1) reads the queue under the
	// client's mark, is handed the lock, and releases: its driver's next
	// create follows that reading, so the gap rule may place it.
	wDone := waitOn(ctx, w)
	gone(t, ctx, r.c)
	heldThenGone(t, ctx, w, wDone)
	<-secondGap // the second's first create
	next, err := second.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !<-secondGap {
		t.Error("the second driver's next create: the gap rule did not look at it (its reading was not marked)")
	}
	if err := next.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}
