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

// gapScene: another process (od) holds a fresh lock (sequence 0), and w1
// of driver d (its client through px) waits behind it (sequence 1), so
// that d's last reading of the queue is [holder, w1].
type gapScene struct {
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

func newGapScene(t *testing.T) *gapScene {
	t.Helper()
	s := &gapScene{px: zktest.StartProxy(t, testenv.Shared().Addr()), ctx: testenv.Ctx(t, testenv.WaitLong), path: testenv.Path(t, "/gap")}
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
func (s *gapScene) waitWatched(t *testing.T, who string, c *driver.Contender) {
	t.Helper()
	testenv.WaitFor(t, testenv.WaitShort, who+" watching "+c.Name(), func() bool {
		return testenv.WatchedUnder(t, testenv.Shared(), s.path)[c.Name()] == 1
	})
}

// enqueue makes a contender of d and starts its Wait; it returns once the
// Wait has decided to wait.
func (s *gapScene) enqueue(t *testing.T) (*driver.Contender, <-chan error) {
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

// A contender made right after the highest of the driver's last reading
// of the queue (nothing made in between: its sequence is one more) waits
// on that contender without reading the queue (the gap rule, issue 16),
// and holds when the queue ahead of it is gone.
func TestGapRuleSkipsTheRead(t *testing.T) {
	s := newGapScene(t)
	s.px.ResetCounts()
	w2, w2Done := s.enqueue(t)
	s.waitWatched(t, "w2", s.w1)
	if n := queueReads(s.px); n != 0 {
		t.Errorf("w2 read the queue %d times, want 0 (the gap rule)", n)
	}
	gone(t, s.ctx, s.holder)
	if err := <-s.w1Done; err != nil {
		t.Fatalf("w1: %v", err)
	}
	testenv.NotYet(t, w2Done, "w2, while w1 holds")
	gone(t, s.ctx, s.w1)
	heldThenGone(t, s.ctx, w2, w2Done)
}

// A contender made after another create than its driver's last reading
// shows (a gap in the sequence), or asked to decide at once (Try), reads
// the queue.
func TestGapRuleNotAcrossAGap(t *testing.T) {
	s := newGapScene(t)
	x, err := s.od.Enqueue(s.ctx, nil) // the gap: made after w1's reading
	if err != nil {
		t.Fatal(err)
	}
	s.px.ResetCounts()
	w2, w2Done := s.enqueue(t)
	if n := queueReads(s.px); n != 1 {
		t.Errorf("w2, made after a create w1 never saw, read the queue %d times, want 1", n)
	}
	s.waitWatched(t, "w2", x)

	// Try: its answer must be the queue's now, not one it may be behind.
	s.px.ResetCounts()
	w3, err := s.d.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w3.Wait(s.ctx, &driver.WaitOptions{Try: true}); err == nil {
		t.Fatal("a Try behind a holder held")
	}
	if n := queueReads(s.px); n != 1 {
		t.Errorf("a Try read the queue %d times, want 1", n)
	}
	gone(t, s.ctx, w3, s.holder, x)
	heldThenGone(t, s.ctx, s.w1, s.w1Done)
	heldThenGone(t, s.ctx, w2, w2Done)
}

// The gap rule's hole (gap.go, 5.): the lock path emptied, removed (as the
// server reaps an empty container) and made again between the driver's
// reading and its next create, whose sequence then happens to follow that
// reading's highest. The queue the rule knows holds none of the new path's
// contenders (it would wait on the old holder, find it gone and take the
// handoff): the spent mark makes the new contender read the queue and wait
// behind the new holder, never hold past it.
func TestGapRuleAfterTheLockPathIsRemade(t *testing.T) {
	s := newGapScene(t)
	s.stopW1()
	if err := <-s.w1Done; !errors.Is(err, context.Canceled) {
		t.Fatalf("w1: %v, want context.Canceled", err)
	}
	gone(t, s.ctx, s.w1, s.holder)
	if err := s.other.Delete(s.ctx, s.path); err != nil { // the reaper
		t.Fatal(err)
	}
	// The path anew: sequences 0 (the new holder) and 1 (gone), so that
	// ours is 2, one more than the reading's highest.
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

// The same hole where the rule decides with no read at all: a driver that
// held alone takes its next hold on its sequence alone. If the path is
// reaped and made again (with another's holder below us) after the rule's
// first look but before our create, only the mark's check once the create
// has returned sees it: the contender must read the queue and wait.
func TestGapRuleAloneAfterTheLockPathIsRemade(t *testing.T) {
	later := testenv.RestoreLater(t) // hooks restored after the clients are closed
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/gapalone")
	other := testenv.Client(t, testenv.Shared().ConnectString())
	d, od := newDriver(t, testenv.Client(t, px.Addr()), path), newDriver(t, other, path)
	persistentPath(t, other, path) // not reaped while it is empty between two holds
	reads := func() int {
		return queueReads(px) + px.Requests(zktest.OpGetData)
	}
	for i := 0; i < 2; i++ { // marks the path, then holds by the rule
		px.ResetCounts()
		c, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		gone(t, ctx, c)
		if i == 1 && reads() != 0 {
			t.Fatalf("the second hold alone made %d reads, want 0 (the premise: the rule decides it)", reads())
		}
	}
	var newHolder *driver.Contender
	later(driver.SetCreateHook(func(by *driver.Driver, gap bool) {
		if by != d || newHolder != nil {
			return // od's creates below, or a later one of d's
		}
		if !gap {
			t.Error("the rule did not look at the create (the premise)")
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
