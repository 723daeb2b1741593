package faults_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

// A read-write lock under every fault: never a writer beside another
// holder, nor a reader beside a writer, that was not told of a loss;
// everyone acquires again after the faults; nothing left behind. Every
// worker writes one acquisition in three, so reads wait behind writes
// throughout, and a read whose writer goes decides onward, on the reading
// it waited with (internal/driver/onward.go): each fault of the cycle
// also hits such waits.
func TestFaultsReadWriteLock(t *testing.T) {
	s := newFaultScene(t, 6)
	cl, admin, clients, rep, ctx := s.cl, s.admin, s.clients, s.rep, s.ctx
	const path = "/faults/rwlock"

	// The holdings under way, by their held contexts (ended once lost).
	var mu sync.Mutex
	readers, writers := map[context.Context]bool{}, map[context.Context]bool{}
	var grants, writes atomic.Int64
	var violations []string
	live := func(held map[context.Context]bool) int {
		n := 0
		for h := range held {
			if h.Err() == nil {
				n++
			}
		}
		return n
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var final atomic.Int32
	for i, c := range clients {
		rw, err := locks.NewReadWriteLock(c.Client, path)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("client-%d", i)
			for n := 0; ; n++ {
				stopped := false
				select {
				case <-stop:
					stopped = true
				default:
				}
				write := n%3 == i%3
				var half interface {
					Acquire(context.Context) (context.Context, error)
					Unlock(context.Context) error
				} = rw.Read()
				held := readers
				if write {
					half, held = rw.Write(), writers
				}
				hctx, err := half.Acquire(ctx)
				if err != nil {
					if s.gaveUp(t, name, err) {
						return
					}
					continue
				}
				mu.Lock()
				if hctx.Err() == nil {
					switch w, r := live(writers), live(readers); {
					case write && w+r > 0:
						violations = append(violations, fmt.Sprintf("%s: a write granted beside %d live writers and %d live readers", name, w, r))
					case !write && w > 0:
						violations = append(violations, fmt.Sprintf("%s: a read granted beside %d live writers", name, w))
					}
				}
				held[hctx] = true
				mu.Unlock()
				grants.Add(1)
				if write {
					writes.Add(1)
				}
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				delete(held, hctx)
				mu.Unlock()
				// The release rule: nil, or a loss the holder was told of;
				// nothing else under any fault.
				if err := half.Unlock(ctx); err != nil {
					if !errors.Is(err, curator.ErrLockLost) {
						t.Errorf("%s unlock: %v, want nil or ErrLockLost", name, err)
					}
					rep.add("%s unlock after a loss: %v", name, err)
				}
				if stopped {
					final.Add(1)
					return
				}
			}
		}()
	}
	// After the clients: should the test end early, the workers stop
	// before their clients close and before the test is over.
	t.Cleanup(func() { s.cancel(errTestOver); wg.Wait() })
	progress := func() int { return int(grants.Load()) }
	testenv.WaitFor(t, time.Minute, "work before the faults", func() bool { return writes.Load() >= 5 && progress() >= 20 })
	faults, start := faultCycles(ctx, t, cl, clients, progress, rep, path)
	close(stop)
	// Every worker acquires once more, now the faults have stopped (a
	// divergence of the last fault's is resynced, as during the cycle).
	awaitProgress(t, cl, rep, "after the faults", func() bool { return int(final.Load()) == len(clients) }, []string{path})
	wg.Wait()
	if int(final.Load()) != len(clients) {
		t.Errorf("%d of %d workers acquired after the faults stopped", final.Load(), len(clients))
	}
	for _, v := range violations {
		t.Error(v)
	}
	leftNothing(ctx, t, cl, admin, clients, path)
	rep.add("read-write lock: %d faults injected in %v, %d grants (%d writes), %d violations",
		faults, time.Since(start).Round(time.Second), grants.Load(), writes.Load(), len(violations))
	rep.log(t)
}
