package semaphore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
)

// A waiter for the internal lock starts its lease create when its
// predecessor goes (speculate.go). Here the predecessor gives up while the
// lock's holder still holds it and waits for the one lease: the waiter's
// speculative node must be deleted, never kept or left waiting beside the
// holder's; the holder is granted its lease first, and the waiter keeps the
// node it speculates once it does hold the lock. Every step waits for what
// the server shows, with no sleep.
func TestSemaphoreSpeculationOnlyForTheLockHolder(t *testing.T) {
	speculated := make(chan string, 4)
	semaphore.SetSpeculateHook(func(node string) {
		select {
		case speculated <- framework.NodeName(node):
		default:
			t.Errorf("more speculative nodes than the test expects: %s", node)
		}
	})
	// Before the clients: restored once they are closed.
	t.Cleanup(func() { semaphore.SetSpeculateHook(nil) })
	path := semPath(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	obs := testenv.Client(t, testenv.Shared().ConnectString())
	sem := func() *semaphore.Semaphore {
		return newSem(t, testenv.Client(t, testenv.Shared().ConnectString()), path, 1)
	}
	locks := func() int { return len(testenv.Children(t, obs, path+"/locks")) }
	leases := func() []string { return leaseNodes(t, obs, path) }

	held, err := sem().Acquire(ctx) // the one lease
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		l   *semaphore.Lease
		err error
	}
	acquire := func(ctx context.Context, s *semaphore.Semaphore) <-chan result {
		ch := make(chan result, 1)
		go func() {
			l, err := s.Acquire(ctx)
			ch <- result{l, err}
		}()
		return ch
	}
	a := acquire(ctx, sem()) // takes the lock, waits on the leases
	testenv.WaitFor(t, testenv.WaitShort, "A holding the lock and waiting", func() bool { return locks() == 1 && len(leases()) == 2 })
	pctx, cancelP := context.WithCancel(ctx)
	p := acquire(pctx, sem()) // queued behind A
	testenv.WaitFor(t, testenv.WaitShort, "P queued", func() bool { return locks() == 2 })
	cb := testenv.Client(t, testenv.Shared().ConnectString())
	b := acquire(ctx, newSem(t, cb, path, 1)) // queued behind P
	// The lock nodes' watches (driver/handoff.go): A's by P (its
	// predecessor) and B (looking ahead), P's by B and by P (its own
	// mark), B's by B; B sets its watch on P before the others.
	testenv.WaitFor(t, testenv.WaitShort, "B queued, watching P", func() bool {
		var by [3]int
		for _, sessions := range testenv.WatchedUnder(t, testenv.Shared(), path+"/locks") {
			by[min(sessions, 2)]++
		}
		return locks() == 3 && by[1] == 1 && by[2] == 2
	})

	cancelP() // P gives up: B is woken, speculates, and finds A still ahead
	if r := <-p; r.err == nil {
		t.Fatal("P was granted a lease after giving up")
	}
	var first string
	select {
	case first = <-speculated:
	case <-ctx.Done():
		t.Fatal("B never speculated")
	}
	testenv.WaitFor(t, testenv.WaitShort, "B's speculative node deleted", func() bool {
		return !slices.Contains(leases(), first) && len(leases()) == 2 && locks() == 2
	})
	select {
	case r := <-b:
		t.Fatalf("B done while A holds the lock: %v, %v", r.l, r.err)
	case r := <-a:
		t.Fatalf("A done while the lease is held: %v, %v", r.l, r.err)
	default:
	}

	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ra := <-a // A first: it held the lock
	if ra.err != nil {
		t.Fatal(ra.err)
	}
	var second string
	select { // A's lock released: B speculates again, and holds the lock
	case second = <-speculated:
	case <-ctx.Done():
		t.Fatal("B did not speculate once A was done")
	}
	testenv.WaitFor(t, testenv.WaitShort, "B holding the lock and waiting on its speculative node", func() bool {
		ls := leases()
		return locks() == 1 && len(ls) == 2 && slices.Contains(ls, second)
	})
	if err := ra.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	rb := <-b
	if rb.err != nil {
		t.Fatal(rb.err)
	}
	if got := framework.NodeName(rb.l.Node()); got != second {
		t.Fatalf("B was granted %s, not the node it speculated (%s)", got, second)
	}
	if err := rb.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "nothing left", func() bool { return len(leases()) == 0 && locks() == 0 })
}
