package faults_test

import (
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

	active := map[*semaphore.Lease]bool{} // the leases under way, under the scene's lock (hold)
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
		s.hold(t, name, func() (v string) {
			select {
			case <-l.Lost():
			default:
				if n := live(); n >= max {
					v = "a fourth live lease was granted"
				}
			}
			active[l] = true
			return v
		}, func() { delete(active, l) }, l.Release)
		return true, false
	})
	progress := func() int { return int(s.grants.Load()) }
	testenv.WaitFor(t, time.Minute, "work before the faults", func() bool { return progress() >= 10 })
	faults, start := faultCycles(ctx, t, cl, clients, progress, rep, path+"/locks", path+"/leases")
	s.finish(t, path+"/locks", path+"/leases")
	for _, v := range s.violations {
		t.Error(v)
	}
	leftNothing(ctx, t, cl, admin, clients, path+"/leases", path+"/locks")
	rep.add("semaphore(3): %d faults injected in %v, %d grants, %d violations",
		faults, time.Since(start).Round(time.Second), s.grants.Load(), len(s.violations))
	rep.log(t)
}
