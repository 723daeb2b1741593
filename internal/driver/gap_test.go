package driver_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// onWaiting returns a channel closed once c's Wait has decided to wait
// (the hook is removed at the test's end).
func onWaiting(t *testing.T, c **driver.Contender) <-chan struct{} {
	t.Helper()
	var once sync.Once
	ch := make(chan struct{})
	t.Cleanup(driver.SetWaitHook(func(ct *driver.Contender) {
		if ct == *c {
			once.Do(func() { close(ch) })
		}
	}))
	return ch
}

// queueReads counts the reads of the queue that went through px.
func queueReads(px *zktest.Proxy) int {
	return px.Requests(zktest.OpGetChildren2) + px.Requests(zktest.OpGetChildren)
}

// A contender made right after the highest of the driver's last reading
// of the queue (nothing made in between: its sequence is one more) waits
// on that contender without reading the queue (the gap rule, issue 16),
// and holds when the queue ahead of it is gone.
func TestGapRuleSkipsTheRead(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/gap")
	holder, err := newDriver(t, other, path).Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, c, path)
	w1, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	w1Done := waitOn(ctx, w1) // reads [holder, w1]
	testenv.WaitFor(t, testenv.WaitShort, "w1 watching the holder", func() bool {
		return watchedUnder(t, path)[holder.Name()] == 1
	})
	px.ResetCounts()
	var w2 *driver.Contender
	waiting := onWaiting(t, &w2)
	if w2, err = d.Enqueue(ctx, nil); err != nil {
		t.Fatal(err)
	}
	w2Done := waitOn(ctx, w2)
	<-waiting
	testenv.WaitFor(t, testenv.WaitShort, "w2 watching w1", func() bool {
		return watchedUnder(t, path)[w1.Name()] == 1
	})
	if n := queueReads(px); n != 0 {
		t.Errorf("w2 read the queue %d times, want 0 (the gap rule)", n)
	}
	if err := holder.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-w1Done; err != nil {
		t.Fatalf("w1: %v", err)
	}
	select {
	case err := <-w2Done:
		t.Fatalf("w2 returned (%v) while w1 holds", err)
	default:
	}
	if err := w1.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-w2Done; err != nil {
		t.Fatalf("w2: %v", err)
	}
	if err := w2.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}

// A contender made after another create than its driver's last reading
// shows (a gap in the sequence), or asked to decide at once (Try), reads
// the queue.
func TestGapRuleNotAcrossAGap(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/gap")
	od := newDriver(t, other, path)
	holder, err := od.Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, c, path)
	w1, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	w1Done := waitOn(ctx, w1)
	testenv.WaitFor(t, testenv.WaitShort, "w1 watching the holder", func() bool {
		return watchedUnder(t, path)[holder.Name()] == 1
	})
	x, err := od.Enqueue(ctx, nil) // the gap: made after w1's reading
	if err != nil {
		t.Fatal(err)
	}
	px.ResetCounts()
	var w2 *driver.Contender
	waiting := onWaiting(t, &w2)
	if w2, err = d.Enqueue(ctx, nil); err != nil {
		t.Fatal(err)
	}
	w2Done := waitOn(ctx, w2)
	<-waiting
	if n := queueReads(px); n != 1 {
		t.Errorf("w2, made after a create w1 never saw, read the queue %d times, want 1", n)
	}
	testenv.WaitFor(t, testenv.WaitShort, "w2 watching x", func() bool {
		return watchedUnder(t, path)[x.Name()] == 1
	})

	// Try: its answer must be the queue's now, not one it may be behind.
	px.ResetCounts()
	w3, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w3.Wait(ctx, &driver.WaitOptions{Try: true}); err == nil {
		t.Fatal("a Try behind a holder held")
	}
	if n := queueReads(px); n != 1 {
		t.Errorf("a Try read the queue %d times, want 1", n)
	}
	if err := w3.Delete(ctx); err != nil {
		t.Fatal(err)
	}

	for _, n := range []*driver.Contender{holder, x} {
		if err := n.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-w1Done; err != nil {
		t.Fatalf("w1: %v", err)
	}
	if err := w1.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-w2Done; err != nil {
		t.Fatalf("w2: %v", err)
	}
	if err := w2.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}

// The gap rule's hole (gap.go, 5.): the lock path emptied, removed (as the
// server reaps an empty container) and made again between the driver's
// reading and its next create, whose sequence then happens to follow that
// reading's highest. The queue the rule knows holds none of the new path's
// contenders: the new contender must read the queue once its predecessor
// there is found gone, and wait behind the new holder, never hold past it.
func TestGapRuleAfterTheLockPathIsRemade(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/gap")
	od := newDriver(t, other, path)
	holder, err := od.Acquire(ctx, nil, &driver.WaitOptions{}) // sequence 0
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, c, path)
	w1, err := d.Enqueue(ctx, nil) // sequence 1
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	w1Done := waitOn(wctx, w1) // reads [holder, w1]: the reading the rule will use
	testenv.WaitFor(t, testenv.WaitShort, "w1 watching the holder", func() bool {
		return watchedUnder(t, path)[holder.Name()] == 1
	})
	stop()
	if err := <-w1Done; !errors.Is(err, context.Canceled) {
		t.Fatalf("w1: %v, want context.Canceled", err)
	}
	if err := w1.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := holder.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, path); err != nil { // the reaper
		t.Fatal(err)
	}
	// The path anew: sequences 0 (the new holder) and 1 (gone), so that
	// ours is 2, one more than the reading's highest.
	newHolder, err := od.Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := od.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := gone.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	var w2 *driver.Contender
	waiting := onWaiting(t, &w2)
	if w2, err = d.Enqueue(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if seq, _ := d.Sequence(w2.Name()); seq != "0000000002" {
		t.Fatalf("w2's sequence %s, want 0000000002 (the test's premise)", seq)
	}
	w2Done := waitOn(ctx, w2)
	<-waiting
	testenv.WaitFor(t, testenv.WaitShort, "w2 watching the new holder", func() bool {
		return watchedUnder(t, path)[newHolder.Name()] == 1
	})
	select {
	case err := <-w2Done:
		t.Fatalf("w2 returned (%v) while the new holder holds: two holders", err)
	default:
	}
	if err := newHolder.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-w2Done; err != nil {
		t.Fatalf("w2 once the new holder went: %v", err)
	}
	if err := w2.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}
