package semaphore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testenv"
)

// The lost wake-up invariant (issue 14 item 1): two clients, one lease,
// holds of a millisecond at most, up to thousands of acquisitions in the
// budget: never two holders, and never a stall (each acquisition within a
// generous deadline; before the fix one waiter slept to its deadline
// within a few hundred). How many fit in the budget is logged, not judged:
// it measures the machine; both clients must have made progress.
func TestSemaphoreNoStallOneLease(t *testing.T) {
	path := semPath(t)
	const (
		want     = 3000
		budget   = 25 * time.Second
		perStall = 10 * time.Second
	)
	ctx := testenv.Ctx(t, budget+2*perStall)
	end := time.Now().Add(budget)
	var total, inside atomic.Int64
	var each [2]atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		s := newSem(t, testenv.Client(t, testenv.Shared().ConnectString()), path, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for total.Load() < want && time.Now().Before(end) && !t.Failed() {
				actx, cancel := context.WithTimeout(ctx, perStall)
				start := time.Now()
				l, err := s.Acquire(actx)
				cancel()
				if err != nil {
					t.Errorf("acquisition %d stalled %v: %v", total.Load(), time.Since(start).Round(time.Millisecond), err)
					return
				}
				if inside.Add(1) != 1 {
					t.Error("two holders of a one-lease semaphore")
				}
				each[i].Add(1)
				if n := total.Add(1); n%2 == 0 {
					time.Sleep(time.Millisecond) // a hold of up to 1 ms; half the holds are instant
				}
				inside.Add(-1)
				if err := l.Release(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d acquisitions (%d and %d) in at most %v", total.Load(), each[0].Load(), each[1].Load(), budget)
	for i := range each {
		if each[i].Load() == 0 && !t.Failed() {
			t.Errorf("client %d never acquired", i)
		}
	}
}
