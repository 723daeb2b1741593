package faults_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
)

// A 3-lease semaphore under every fault: never more than 3 leases held by
// holders that were not told of a loss, everyone acquires again after the
// faults, nothing left behind.
func TestFaultsSemaphore(t *testing.T) {
	s := newFaultScene(t, 6)
	cl, admin, clients, rep, ctx := s.cl, s.admin, s.clients, s.rep, s.ctx
	const path, max = "/faults/semaphore", 3

	var mu sync.Mutex
	active := map[*semaphore.Lease]bool{}
	var grants atomic.Int64
	var violations []string
	live := func() int {
		n := 0
		for l := range active {
			select {
			case <-l.Lost():
			default:
				n++
			}
		}
		return n
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var final atomic.Int32
	for _, c := range clients {
		sem, err := semaphore.New(c.Client, path, max)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				stopped := false
				select {
				case <-stop:
					stopped = true
				default:
				}
				l, err := sem.Acquire(ctx)
				if err != nil {
					if s.gaveUp(t, "an acquirer", err) {
						return
					}
					continue
				}
				mu.Lock()
				select {
				case <-l.Lost():
				default:
					if n := live(); n >= max {
						violations = append(violations, "a fourth live lease was granted")
					}
				}
				active[l] = true
				mu.Unlock()
				grants.Add(1)
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				delete(active, l)
				mu.Unlock()
				// The release rule: nil, or a loss the holder was told of;
				// nothing else under any fault.
				if err := l.Release(ctx); err != nil {
					if !errors.Is(err, curator.ErrLockLost) {
						t.Errorf("release: %v, want nil or ErrLockLost", err)
					}
					rep.add("release after a loss: %v", err)
				}
				if stopped {
					final.Add(1)
					return
				}
			}
		}()
	}
	// After the clients: should the test end early, the acquirers stop
	// before their clients close and before the test is over.
	t.Cleanup(func() { s.cancel(errTestOver); wg.Wait() })
	progress := func() int { return int(grants.Load()) }
	testenv.WaitFor(t, time.Minute, "work before the faults", func() bool { return progress() >= 10 })
	faults, start := faultCycles(ctx, t, cl, clients, progress, rep, path+"/locks", path+"/leases")
	close(stop)
	// Every acquirer acquires once more, now the faults have stopped (a
	// divergence of the last fault's is resynced, as during the cycle).
	awaitProgress(t, cl, rep, "after the faults", func() bool { return int(final.Load()) == len(clients) },
		[]string{path + "/locks", path + "/leases"})
	wg.Wait()
	if int(final.Load()) != len(clients) {
		t.Errorf("%d of %d acquirers got a lease after the faults stopped", final.Load(), len(clients))
	}
	for _, v := range violations {
		t.Error(v)
	}
	leftNothing(ctx, t, cl, admin, clients, path+"/leases", path+"/locks")
	rep.add("semaphore(3): %d faults injected in %v, %d grants, %d violations",
		faults, time.Since(start).Round(time.Second), grants.Load(), len(violations))
	rep.log(t)
}
