package faults_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

	// The holdings under way, by their held contexts (ended once lost),
	// under the scene's lock (hold).
	readers, writers := map[context.Context]bool{}, map[context.Context]bool{}
	var writes atomic.Int64
	live := func(held map[context.Context]bool) int {
		n := 0
		for h := range held {
			if h.Err() == nil {
				n++
			}
		}
		return n
	}
	rws := make([]*locks.ReadWriteLock, len(clients))
	for i, c := range clients {
		rw, err := locks.NewReadWriteLock(c.Client, path)
		if err != nil {
			t.Fatal(err)
		}
		rws[i] = rw
	}
	n := make([]int, len(rws)) // each worker's rounds so far, its own goroutine's alone
	s.work(t, func(i int, name string) (held, gaveUp bool) {
		rw := rws[i]
		write := n[i]%3 == i%3
		n[i]++
		var half interface {
			Acquire(context.Context) (context.Context, error)
			Unlock(context.Context) error
		} = rw.Read()
		holders := readers
		if write {
			half, holders = rw.Write(), writers
		}
		hctx, err := half.Acquire(ctx)
		if err != nil {
			return false, s.gaveUp(t, name, err)
		}
		s.hold(t, name, func() (v string) {
			if hctx.Err() == nil {
				switch w, r := live(writers), live(readers); {
				case write && w+r > 0:
					v = fmt.Sprintf("%s: a write granted beside %d live writers and %d live readers", name, w, r)
				case !write && w > 0:
					v = fmt.Sprintf("%s: a read granted beside %d live writers", name, w)
				}
			}
			holders[hctx] = true
			if write {
				writes.Add(1)
			}
			return v
		}, func() { delete(holders, hctx) }, half.Unlock)
		return true, false
	})
	progress := func() int { return int(s.grants.Load()) }
	testenv.WaitFor(t, time.Minute, "work before the faults", func() bool { return writes.Load() >= 5 && progress() >= 20 })
	faults, start := faultCycles(ctx, t, cl, clients, progress, rep, path)
	s.finish(t, path)
	for _, v := range s.violations {
		t.Error(v)
	}
	leftNothing(ctx, t, cl, admin, clients, path)
	rep.add("read-write lock: %d faults injected in %v, %d grants (%d writes), %d violations",
		faults, time.Since(start).Round(time.Second), s.grants.Load(), writes.Load(), len(s.violations))
	rep.log(t)
}
