package semaphore_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
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
// node it speculates once it does hold the lock (its handoff made to take a
// round trip). Every step waits for what the server shows, with no sleep.
func TestSemaphoreSpeculationOnlyForTheLockHolder(t *testing.T) {
	speculated := make(chan string, 4)
	semaphore.SetSpeculateHook(func(node string) { // restored by the scene's clean-up
		select {
		case speculated <- framework.NodeName(node):
		default:
			t.Errorf("more speculative nodes than the test expects: %s", node)
		}
	})
	sc := newSpecScene(t)
	ctx, obs, path, sem, locks, leases, acquire := sc.ctx, sc.obs, sc.path, sc.sem, sc.locks, sc.leases, sc.acquire

	held, err := sem().Acquire(ctx) // the one lease
	if err != nil {
		t.Fatal(err)
	}
	a := acquire(ctx, sem()) // takes the lock, waits on the leases
	testenv.WaitFor(t, testenv.WaitShort, "A holding the lock and waiting", func() bool { return locks() == 1 && len(leases()) == 2 })
	pctx, cancelP := context.WithCancel(ctx)
	p := acquire(pctx, sem()) // queued behind A
	testenv.WaitFor(t, testenv.WaitShort, "P queued", func() bool { return locks() == 2 })
	cb := testenv.Client(t, testenv.Shared().ConnectString())
	b := acquire(ctx, newSem(t, cb, path, 1)) // queued behind P
	// The lock nodes' watches (driver/handoff.go, 5.): A's by P (its
	// predecessor) and by A (the holder watches its node); P's by B and
	// by P (its own mark: right behind the holder, it may hold without a
	// read); B's by nobody (A, before its predecessor, is another
	// client's: B reads the queue when woken).
	testenv.WaitFor(t, testenv.WaitShort, "B queued, watching P", func() bool {
		var by [3]int
		for _, sessions := range testenv.WatchedUnder(t, testenv.Shared(), path+"/locks") {
			by[min(sessions, 2)]++
		}
		return locks() == 3 && by[1] == 0 && by[2] == 2
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

	// B's handoff from A is then made to take a round trip: B's lock node
	// changes while B waits, which spends the mark that would prove it
	// still there without a request (driver/handoff.go, 4.), so an exists
	// must. B speculates beside that exists (with the mark intact there is
	// no round trip, and no speculation: the next test).
	ls := testenv.Children(t, obs, path+"/locks")
	b1 := slices.MaxFunc(ls, func(x, y string) int { return strings.Compare(x[len(x)-10:], y[len(y)-10:]) }) // the highest sequence: B's
	if _, err := obs.Set(ctx, path+"/locks/"+b1, []byte("changed")); err != nil {
		t.Fatal(err)
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

// A waiter for the internal lock that the process knows holds once its
// predecessor goes (a handoff with its node's mark intact: no request)
// does not speculate: there is no round trip to start its lease create
// beside, and a create on another goroutine only costs (issue 16). It makes
// its lease node itself once it holds the lock.
func TestSemaphoreNoSpeculationOnAHandoff(t *testing.T) {
	var speculated atomic.Int32
	semaphore.SetSpeculateHook(func(string) { speculated.Add(1) }) // restored by the scene's clean-up
	sc := newSpecScene(t)
	ctx, sem, locks, acquire := sc.ctx, sc.sem, sc.locks, sc.acquire
	leases := func() int { return len(sc.leases()) }

	held, err := sem().Acquire(ctx) // the one lease
	if err != nil {
		t.Fatal(err)
	}
	a := acquire(ctx, sem()) // takes the lock, waits on the leases
	testenv.WaitFor(t, testenv.WaitShort, "A holding the lock and waiting", func() bool { return locks() == 1 && leases() == 2 })
	b := acquire(ctx, sem()) // queued behind A
	testenv.WaitFor(t, testenv.WaitShort, "B queued", func() bool { return locks() == 2 })
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ra := <-a // granted; its lock goes, and B holds it at once
	if ra.err != nil {
		t.Fatal(ra.err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "B holding the lock and waiting on its lease", func() bool { return locks() == 1 && leases() == 2 })
	if err := ra.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	rb := <-b
	if rb.err != nil {
		t.Fatal(rb.err)
	}
	// A speculation's hook runs before its node is handed to the acquire
	// that waits for it: had B speculated, the count would show it now.
	if n := speculated.Load(); n != 0 {
		t.Fatalf("%d speculative lease creates on a handoff that needed no round trip", n)
	}
	if err := rb.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// specScene is the speculation tests' set-up: a semaphore path of one
// lease, an observing client, and a semaphore on a client of its own per
// sem call. The test sets the speculation hook before it: the scene's
// clean-up, registered before its clients', restores it once they are
// closed.
type specScene struct {
	t    *testing.T
	ctx  context.Context
	obs  *framework.Client
	path string
}

type specResult struct {
	l   *semaphore.Lease
	err error
}

func newSpecScene(t *testing.T) *specScene {
	t.Cleanup(func() { semaphore.SetSpeculateHook(nil) })
	return &specScene{t: t, ctx: testenv.Ctx(t, testenv.WaitLong), obs: testenv.Client(t, testenv.Shared().ConnectString()), path: semPath(t)}
}

func (sc *specScene) sem() *semaphore.Semaphore {
	return newSem(sc.t, testenv.Client(sc.t, testenv.Shared().ConnectString()), sc.path, 1)
}

func (sc *specScene) locks() int { return len(testenv.Children(sc.t, sc.obs, sc.path+"/locks")) }

func (sc *specScene) leases() []string { return leaseNodes(sc.t, sc.obs, sc.path) }

// acquire starts s.Acquire(ctx); its outcome comes on the channel.
func (sc *specScene) acquire(ctx context.Context, s *semaphore.Semaphore) <-chan specResult {
	ch := make(chan specResult, 1)
	go func() {
		l, err := s.Acquire(ctx)
		ch <- specResult{l, err}
	}()
	return ch
}
