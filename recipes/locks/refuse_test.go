package locks_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/recipes/locks"
)

// Issue 14 item 7: MaxLeases(n <= 0) cannot work (a waiter would watch its
// own node, or index out of range), so NewDriver refuses it, and the
// predicate itself, called directly, reports an error instead of panicking.
func TestDriverRefusesMaxLeasesBelowOne(t *testing.T) {
	c := newClient(t, shared.ConnectString())
	for _, n := range []int{0, -1, -5} {
		if _, err := locks.NewDriver(c, lockPath(t), "lease-", locks.MaxLeases(n)); !errors.Is(err, locks.ErrInvalidArgument) {
			t.Errorf("NewDriver with MaxLeases(%d): %v, want ErrInvalidArgument", n, err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("MaxLeases(%d) predicate panicked: %v", n, r)
				}
			}()
			dec, err := locks.MaxLeases(n)([]string{"lease-0000000001", "lease-0000000002"}, 1)
			if !errors.Is(err, locks.ErrInvalidArgument) || dec.Held {
				t.Errorf("MaxLeases(%d) predicate: %+v, %v; want ErrInvalidArgument", n, dec, err)
			}
		}()
	}
	if _, err := locks.NewDriver(c, lockPath(t), "lease-", locks.MaxLeases(2)); err != nil {
		t.Fatalf("MaxLeases(2): %v", err)
	}
}

// Issue 14 item 7: Monitor.Stop from several goroutines at once (and again
// after) neither panics nor returns before the watch has ended.
func TestMonitorStopConcurrent(t *testing.T) {
	c := newClient(t, shared.ConnectString())
	d, err := locks.NewDriver(c, lockPath(t), "lock-", locks.MaxLeases(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, time.Minute)
	for i := 0; i < 20; i++ {
		ct, err := d.Acquire(ctx, nil, locks.WaitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mon := ct.Monitor(locks.LoseOnSuspend, nil)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for j := 0; j < 4; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				mon.Stop()
			}()
		}
		close(start)
		wg.Wait()
		mon.Stop()
		if err := ct.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var zero locks.Monitor // a Monitor never started: Stop is a no-op
	zero.Stop()
	var nilMon *locks.Monitor
	nilMon.Stop()
}
