package driver_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
)

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
	// The entry keeps max(keep, 2 x waiters) names; a few more may be
	// counted while one is recorded (HandoffGone reads between calls).
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
