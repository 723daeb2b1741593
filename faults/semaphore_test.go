package faults_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	sems := make([]*semaphore.Semaphore, len(clients))
	for i, c := range clients {
		sem, err := semaphore.New(c.Client, path, max)
		if err != nil {
			t.Fatal(err)
		}
		sems[i] = sem
	}
	s.work(t, func(i int, name string) (held, gaveUp bool) {
		l, err := sems[i].Acquire(ctx)
		if err != nil {
			return false, s.gaveUp(t, name, err)
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
		s.released(t, name, l.Release(ctx))
		return true, false
	})
	progress := func() int { return int(grants.Load()) }
	testenv.WaitFor(t, time.Minute, "work before the faults", func() bool { return progress() >= 10 })
	faults, start := faultCycles(ctx, t, cl, clients, progress, rep, path+"/locks", path+"/leases")
	s.finish(t, path+"/locks", path+"/leases")
	for _, v := range violations {
		t.Error(v)
	}
	leftNothing(ctx, t, cl, admin, clients, path+"/leases", path+"/locks")
	rep.add("semaphore(3): %d faults injected in %v, %d grants, %d violations",
		faults, time.Since(start).Round(time.Second), grants.Load(), len(violations))
	rep.log(t)
}
