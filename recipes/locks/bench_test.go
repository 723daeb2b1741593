package locks_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
)

// BenchmarkMutexUncontended: one client, acquire+release pairs (a
// protected create with its parent's stat read behind it, one delete per
// pair).
func BenchmarkMutexUncontended(b *testing.B) { benchUncontended(b, context.Background()) }

// benchUncontended runs acquire+release pairs with ctx.
func benchUncontended(b *testing.B, ctx context.Context) {
	c := testenv.Client(b, testenv.Shared().ConnectString())
	m := newMutex(b, c, lockPath(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.Lock(ctx); err != nil {
			b.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acq/s")
}

// BenchmarkMutexContended: K clients (sessions) contend; b.N acquisitions in all.
func BenchmarkMutexContended(b *testing.B) {
	for _, k := range []int{4, 16} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			path := lockPath(b)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			var left atomic.Int64
			left.Store(int64(b.N))
			var inside atomic.Int32
			var wg sync.WaitGroup
			ms := make([]interface {
				Lock(context.Context) error
				Unlock(context.Context) error
			}, k)
			for i := range ms {
				ms[i] = newMutex(b, testenv.Client(b, testenv.Shared().ConnectString()), path)
			}
			b.ResetTimer()
			for _, m := range ms {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for left.Add(-1) >= 0 {
						if err := m.Lock(ctx); err != nil {
							b.Error(err)
							return
						}
						if inside.Add(1) != 1 {
							b.Error("two holders")
						}
						inside.Add(-1)
						if err := m.Unlock(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acq/s")
		})
	}
}

// BenchmarkMutexUncontendedDeadline is BenchmarkMutexUncontended with a
// context that can end (the common case), which the retry loop cannot run
// on the caller's goroutine alone.
func BenchmarkMutexUncontendedDeadline(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	benchUncontended(b, ctx)
}

// BenchmarkParkedWaiters reports the goroutine stack memory of W waiters
// parked on one path in this process, as the waiters workload of bench/
// queues them (issue 16): "stack-B/waiter" while they queue (a Lock whose
// deepest call grows its stack past 4 KB shows as 8 KB here) and
// "parked-B/waiter" after collections have shrunk what they can (a parked
// frame chain over ~1.2 KB keeps 8 KB). Each iteration queues W waiters
// behind a holder, then lets them through.
func BenchmarkParkedWaiters(b *testing.B) {
	c := testenv.Client(b, testenv.Shared().ConnectString())
	var grown, parked float64
	for range b.N {
		g, p := parkWaiters(b, c, 1000)
		grown += g
		parked += p
	}
	b.ReportMetric(grown/float64(b.N), "stack-B/waiter")
	b.ReportMetric(parked/float64(b.N), "parked-B/waiter")
}

// parkWaiters queues w waiters of c behind a holder on a new path, and
// returns the goroutine stack memory per waiter once every one has parked:
// grown, as their calls left it, and parked, after a collection has shrunk
// what it can. Then it lets them through and waits for them.
func parkWaiters(tb testing.TB, c *framework.Client, w int) (grown, parked float64) {
	ctx := context.Background()
	var parks atomic.Int64 // every watch and mark of a wait set, about to park
	defer driver.SetParkHook(func(*driver.Contender) { parks.Add(1) })()
	path := lockPath(tb)
	holder := newMutex(tb, c, path)
	if err := holder.Lock(ctx); err != nil {
		tb.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	stack0 := ms.StackInuse
	var wg sync.WaitGroup
	held := true
	defer func() { // on a failure too: the waiters go through, then we return
		if held {
			holder.Unlock(ctx)
		}
		wg.Wait()
	}()
	for range w {
		m := newMutex(tb, c, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Lock(ctx); err != nil {
				tb.Error(err)
				return
			}
			if err := m.Unlock(ctx); err != nil {
				tb.Error(err)
			}
		}()
	}
	testenv.WaitFor(tb, testenv.WaitLong, "every waiter parked", func() bool { return parks.Load() >= int64(w) })
	runtime.ReadMemStats(&ms)
	grown = float64(ms.StackInuse-stack0) / float64(w)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	parked = float64(ms.StackInuse-stack0) / float64(w)
	held = false
	if err := holder.Unlock(ctx); err != nil {
		tb.Fatal(err)
	}
	return grown, parked
}
