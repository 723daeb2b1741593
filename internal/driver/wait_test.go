package driver_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
)

// countRule is the semaphore's predicate: held while the contenders number
// at most max; else wait for any change among them (Decision{}).
func countRule(max func() int) driver.Predicate {
	return func(q *driver.Queue, _ int) (driver.Decision, error) {
		if q.Len() <= max() {
			return driver.Decision{Held: true}, nil
		}
		return driver.Decision{}, nil
	}
}

// A lease released after the waiter decided to wait, before it waits, must
// wake it (issue 14 item 1): the waiter decides on the read its watch was
// set with, so the release is either in that answer or fires the watch.
// Before the fix the waiter decided on an unwatched read, then set its watch
// with a second read whose answer it threw away: it slept to its deadline.
func TestWaitSeesReleaseBeforeWatch(t *testing.T) {
	later := testenv.RestoreLater(t) // before the client: restored once it is closed
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	d, err := driver.New(c, testenv.Path(t, "/driver"), "lease-", countRule(func() int { return 1 }))
	if err != nil {
		t.Fatal(err)
	}
	holder, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	waiter, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Delete(ctx)
	var once sync.Once
	var released atomic.Bool
	later(driver.SetWaitHook(func(w *driver.Contender) {
		once.Do(func() {
			if err := holder.Delete(ctx); err != nil {
				t.Error(err)
			}
			released.Store(true)
		})
	}))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := waiter.Wait(wctx, &driver.WaitOptions{}); err != nil {
		t.Fatalf("waiter after the only lease was released: %v", err)
	}
	if !released.Load() {
		t.Fatal("the hook never ran: the waiter never waited")
	}
}

// A Wake raised after the waiter decided to wait, before it waits, must
// wake it (the semaphore's SharedCount raising the maximum): the waiter
// takes the wake channel before it reads the count. Before the fix it took
// the channel after deciding, so a raise in between was missed.
func TestWaitSeesWakeBeforeWatch(t *testing.T) {
	later := testenv.RestoreLater(t) // before the client: restored once it is closed
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	var (
		max    atomic.Int64
		mu     sync.Mutex
		wakeCh = make(chan struct{})
	)
	max.Store(1)
	wake := func() <-chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		return wakeCh
	}
	raise := func() { // as SharedCount.publish: new value, then close the old channel
		mu.Lock()
		defer mu.Unlock()
		max.Store(2)
		close(wakeCh)
		wakeCh = make(chan struct{})
	}
	d, err := driver.New(c, testenv.Path(t, "/driver"), "lease-", countRule(func() int { return int(max.Load()) }))
	if err != nil {
		t.Fatal(err)
	}
	holder, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Delete(ctx)
	waiter, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Delete(ctx)
	var once sync.Once
	later(driver.SetWaitHook(func(*driver.Contender) { once.Do(raise) }))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := waiter.Wait(wctx, &driver.WaitOptions{Wake: wake}); err != nil {
		t.Fatalf("waiter after the maximum was raised to 2: %v", err)
	}
	if max.Load() != 2 {
		t.Fatal("the hook never ran: the waiter never waited")
	}
}
