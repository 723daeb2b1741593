package driver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// queueScene: another process (od) holds a fresh lock (sequence 0), and w1
// of driver d (its client through px) waits behind it (sequence 1).
type queueScene struct {
	px         *zktest.Proxy
	other      *framework.Client
	ctx        context.Context
	path       string
	od, d      *driver.Driver
	holder, w1 *driver.Contender
	w1Done     <-chan error
	stopW1     context.CancelFunc
	waiting    chan *driver.Contender // each Wait that decided to wait (the hook)
}

func newQueueScene(t *testing.T, root string) *queueScene {
	t.Helper()
	s := &queueScene{px: zktest.StartProxy(t, testenv.Shared().Addr()), ctx: testenv.Ctx(t, testenv.WaitLong), path: testenv.Path(t, root)}
	s.waiting = make(chan *driver.Contender, 64)
	t.Cleanup(driver.SetWaitHook(func(c *driver.Contender) { // set before any Wait runs
		select {
		case s.waiting <- c:
		default:
		}
	}))
	s.other = testenv.Client(t, testenv.Shared().ConnectString())
	s.od, s.d = newDriver(t, s.other, s.path), newDriver(t, testenv.Client(t, s.px.Addr()), s.path)
	var err error
	if s.holder, err = s.od.Acquire(s.ctx, nil, &driver.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	if s.w1, err = s.d.Enqueue(s.ctx, nil); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(s.ctx)
	t.Cleanup(stop)
	s.w1Done, s.stopW1 = waitOn(wctx, s.w1), stop
	s.waitWatched(t, "w1", s.holder)
	return s
}

// waitWatched waits until who's wait watches c.
func (s *queueScene) waitWatched(t *testing.T, who string, c *driver.Contender) {
	t.Helper()
	testenv.WaitFor(t, testenv.WaitShort, who+" watching "+c.Name(), func() bool {
		return testenv.WatchedUnder(t, testenv.Shared(), s.path)[c.Name()] == 1
	})
}

// enqueue makes a contender of d and starts its Wait; it returns once the
// Wait has decided to wait.
func (s *queueScene) enqueue(t *testing.T) (*driver.Contender, <-chan error) {
	t.Helper()
	c, err := s.d.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := waitOn(s.ctx, c)
	for testenv.Recv(t, s.waiting, testenv.WaitShort, "the new contender's Wait to decide to wait") != c {
	}
	return c, done
}

// heldThenGone waits for c to hold (done's nil) and deletes its node.
func heldThenGone(t *testing.T, ctx context.Context, c *driver.Contender, done <-chan error) {
	t.Helper()
	if err := <-done; err != nil {
		t.Fatalf("%s: %v, want it to hold", c.Name(), err)
	}
	gone(t, ctx, c)
}

func gone(t *testing.T, ctx context.Context, cs ...*driver.Contender) {
	t.Helper()
	for _, c := range cs {
		if err := c.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A mutex contender lists the queue behind its create, in the same round
// trip, and decides on that listing: it waits on its predecessor with no
// read of its own (issue 38: this replaced the gap rule, which decided on
// the driver's last reading and bought nothing measurable). A Try answers
// on its listing too.
func TestMutexCreateListsTheQueue(t *testing.T) {
	s := newQueueScene(t, "/listmutex")
	s.px.ResetCounts()
	w2, w2Done := s.enqueue(t)
	s.waitWatched(t, "w2", s.w1)
	if n, p := queueReads(s.px), s.px.Requests(zktest.OpExists); n != 1 || p != 0 {
		t.Errorf("w2: %d reads of the queue, %d parent stats; want 1 (the listing behind its create) and 0", n, p)
	}

	s.px.ResetCounts()
	w3, err := s.d.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w3.Wait(s.ctx, &driver.WaitOptions{Try: true}); err == nil {
		t.Fatal("a Try behind a holder held")
	}
	if n := queueReads(s.px); n != 1 {
		t.Errorf("a Try read the queue %d times, want 1 (its listing)", n)
	}
	gone(t, s.ctx, w3, s.holder)
	heldThenGone(t, s.ctx, s.w1, s.w1Done)
	heldThenGone(t, s.ctx, w2, w2Done)
}

// The lock path emptied, removed (as the server reaps an empty container)
// and made again between the driver's readings, so that the next
// contender's sequence follows the highest of its last reading (names
// recur): the new contender decides on the new path's queue, and waits
// behind its holder.
func TestLockPathRemadeBetweenReadings(t *testing.T) {
	s := newQueueScene(t, "/remade")
	s.stopW1()
	if err := <-s.w1Done; !errors.Is(err, context.Canceled) {
		t.Fatalf("w1: %v, want context.Canceled", err)
	}
	gone(t, s.ctx, s.w1, s.holder)
	if err := s.other.Delete(s.ctx, s.path); err != nil { // the reaper
		t.Fatal(err)
	}
	// The path anew: sequences 0 (the new holder) and 1 (gone), so that
	// ours is 2, one more than the last reading's highest.
	newHolder, err := s.od.Acquire(s.ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.od.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	gone(t, s.ctx, x)
	w2, w2Done := s.enqueue(t)
	if seq, _ := s.d.Sequence(w2.Name()); seq != "0000000002" {
		t.Fatalf("w2's sequence %s, want 0000000002 (the test's premise)", seq)
	}
	s.waitWatched(t, "w2", newHolder)
	testenv.NotYet(t, w2Done, "w2, while the new holder holds: two holders")
	gone(t, s.ctx, newHolder)
	heldThenGone(t, s.ctx, w2, w2Done)
}

// The same where a driver held alone just before: the path is reaped and
// made again (another's holder on it) after the create's options are
// chosen and before it is sent. The contender must decide on what the
// server has, and wait.
func TestLockPathRemadeRightBeforeTheCreate(t *testing.T) {
	later := testenv.RestoreLater(t) // hooks restored after the clients are closed
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/remadealone")
	other := testenv.Client(t, testenv.Shared().ConnectString())
	d, od := newDriver(t, testenv.Client(t, px.Addr()), path), newDriver(t, other, path)
	persistentPath(t, other, path) // not reaped while it is empty between two holds
	for i := 0; i < 2; i++ {
		c, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		gone(t, ctx, c)
	}
	var newHolder *driver.Contender
	later(driver.SetCreateHook(func(by *driver.Driver) {
		if by != d || newHolder != nil {
			return // od's creates below, or a later one of d's
		}
		if err := other.Delete(ctx, path); err != nil { // the reaper
			t.Error(err)
			return
		}
		// The path anew (a container): sequences 0 (the new holder) and 1
		// (gone), so that ours is 2, one more than our last hold's.
		var err error
		if newHolder, err = od.Acquire(ctx, nil, &driver.WaitOptions{}); err != nil {
			t.Error(err)
			return
		}
		x, err := od.Enqueue(ctx, nil)
		if err != nil {
			t.Error(err)
			return
		}
		gone(t, ctx, x)
	}))
	w, err := d.Enqueue(ctx, nil)
	if err != nil || newHolder == nil {
		t.Fatal(err)
	}
	driver.SetCreateHook(nil)
	if seq, _ := d.Sequence(w.Name()); seq != "0000000002" {
		t.Fatalf("w's sequence %s, want 0000000002 (the test's premise)", seq)
	}
	wDone := waitOn(ctx, w)
	testenv.WaitFor(t, testenv.WaitShort, "w watching the new holder", func() bool {
		testenv.NotYet(t, wDone, "w, while the new holder holds: two holders")
		return testenv.WatchedUnder(t, testenv.Shared(), path)[newHolder.Name()] == 1
	})
	gone(t, ctx, newHolder)
	heldThenGone(t, ctx, w, wDone)
}
