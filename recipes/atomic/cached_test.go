package atomic_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/atomic"
)

// Two processes take numbers from one counter through CachedLongs, four
// goroutines each at once: every number is handed out once, in
// increasing order per caller, and the counter holds the numbers
// reserved, a multiple of the cache factor (Curator's
// TestCachedAtomicCounter, across processes).
func TestCachedLongHandsOutEachNumberOnce(t *testing.T) {
	t.Parallel()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := atomicPath(t) + "/ids"
	const factor, callers, calls = 5, 4, 20
	var mu sync.Mutex
	var all []int64
	var wg sync.WaitGroup
	for range 2 {
		c := testenv.Client(t, testenv.Shared().ConnectString())
		ids, err := atomic.NewCachedLong(newLong(t, c, path), factor)
		if err != nil {
			t.Fatal(err)
		}
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []int64
				for range calls {
					r, err := ids.Next(ctx)
					if err != nil || !r.Succeeded || r.PostValue != r.PreValue+1 {
						t.Errorf("Next: %+v %v", r, err)
						return
					}
					mine = append(mine, r.PreValue)
				}
				if !slices.IsSorted(mine) {
					t.Errorf("one caller's numbers out of order: %v", mine)
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	slices.Sort(all)
	if n := len(slices.Compact(slices.Clone(all))); n != 2*callers*calls || len(all) != n {
		t.Fatalf("%d numbers handed out, %d distinct, want %d", len(all), n, 2*callers*calls)
	}
	c := testenv.Client(t, testenv.Shared().ConnectString())
	r, err := newLong(t, c, path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.PreValue%factor != 0 || r.PreValue < int64(len(all)) || all[len(all)-1] >= r.PreValue || all[0] < 0 {
		t.Errorf("counter %d after numbers %d..%d", r.PreValue, all[0], all[len(all)-1])
	}
}

// A Next waiting for its turn ends with its ctx; the one under way is
// not disturbed.
func TestCachedNextWaitsWithItsContext(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := atomicPath(t) + "/ids"
	ids, err := atomic.NewCachedInt(newInt(t, c, path), 3)
	if err != nil {
		t.Fatal(err)
	}
	inWrite, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	atomic.SetWriteHook(func(p string) {
		if p == path {
			once.Do(func() { close(inWrite); <-release })
		}
	})
	t.Cleanup(func() { atomic.SetWriteHook(nil) })
	first := make(chan error, 1)
	go func() { _, err := ids.Next(ctx); first <- err }()
	testenv.Recv(t, inWrite, testenv.WaitLong, "the first Next's reservation")
	wctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ids.Next(wctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with an ended ctx while another reserves: %v", err)
	}
	close(release)
	if err := testenv.Recv(t, first, testenv.WaitLong, "the first Next"); err != nil {
		t.Fatal(err)
	}
	for want := int32(1); want <= 4; want++ { // 1, 2 from the first range; 3, 4 from the next
		if r, err := ids.Next(ctx); err != nil || r.PreValue != want {
			t.Fatalf("Next: %+v %v, want %d", r, err, want)
		}
	}
}

func TestCachedBadInput(t *testing.T) {
	t.Parallel()
	c := testenv.Client(t, testenv.Shared().ConnectString())
	l := newLong(t, c, atomicPath(t)+"/l")
	i := newInt(t, c, atomicPath(t)+"/i")
	for what, err := range map[string]error{
		"nil Long":     second(atomic.NewCachedLong(nil, 1)),
		"nil Int":      second(atomic.NewCachedInt(nil, 1)),
		"factor 0":     second(atomic.NewCachedLong(l, 0)),
		"factor -1":    second(atomic.NewCachedInt(i, -1)),
		"int32 factor": second(atomic.NewCachedInt(i, math.MaxInt32+1)),
	} {
		if !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		}
	}
	ids, err := atomic.NewCachedLong(l, 1)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if _, err := ids.Next(nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("Next(nil): %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

func newInt(t testing.TB, c *framework.Client, path string) *atomic.Int {
	t.Helper()
	i, err := atomic.NewInt(c, path)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// The documented limit of a reserved range: it is handed out without a
// read, so a reset of the counter does not end it; the next reservation
// starts from the reset value (numbers may then repeat, as in Curator).
func TestCachedRangeOutlivesAReset(t *testing.T) {
	t.Parallel()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := testenv.Client(t, testenv.Shared().ConnectString())
	l := newLong(t, c, atomicPath(t)+"/ids")
	ids, err := atomic.NewCachedLong(l, 3)
	if err != nil {
		t.Fatal(err)
	}
	next := func() int64 {
		t.Helper()
		r, err := ids.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r.PreValue
	}
	if got := next(); got != 0 {
		t.Fatalf("first id %d, want 0", got)
	}
	if err := l.ForceSet(ctx, 100); err != nil { // an operator's reset
		t.Fatal(err)
	}
	if a, b := next(), next(); a != 1 || b != 2 {
		t.Fatalf("after the reset: %d, %d; want the range's 1, 2", a, b)
	}
	if got := next(); got != 100 {
		t.Fatalf("the next reservation's first id %d, want 100 (the counter as reset)", got)
	}
}
