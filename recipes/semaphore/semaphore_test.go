package semaphore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/testing/zktest"
)

// Curator's testSimple and testSimple2.
func TestSemaphoreSimple(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := semPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	var held []*semaphore.Lease
	for i := 0; i < 3; i++ {
		l, err := newSem(t, c, path, 3).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	fourth := newSem(t, c, path, 3)
	tctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := fourth.Acquire(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fourth lease: %v", err)
	}
	if _, err := fourth.TryAcquire(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("try: %v", err)
	}
	if n := len(leaseNodes(t, c, path)); n != 3 {
		t.Fatalf("%d lease nodes after failed acquires, want 3", n)
	}
	parts, err := fourth.Participants(ctx)
	if err != nil || len(parts) != 3 {
		t.Fatalf("participants %v %v", parts, err)
	}
	if err := held[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := fourth.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, err := l.Data(ctx)
	if err != nil || len(data) == 0 {
		t.Fatalf("lease data %q %v", data, err)
	}
	for _, h := range append(held[1:], l) {
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(leaseNodes(t, c, path)); n != 0 {
		t.Fatalf("%d lease nodes left", n)
	}
}

// Never more than max leases across 10 clients and 200 cycles of leases of
// several sizes (Curator's testMaxPerSession, grown: here the demand exceeds
// the maximum, where Curator's one-at-a-time acquire(qty) can deadlock).
// The peak in use is logged: how high it gets is up to the scheduler
// (TestSemaphoreSimple shows leases held side by side for sure).
func TestSemaphoreNeverOverMax(t *testing.T) {
	path := semPath(t)
	const max = 5
	ctx := testenv.Ctx(t, 3*time.Minute)
	var inUse, peak, cycles atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		s := newSem(t, testenv.Client(t, testenv.Shared().ConnectString()), path, max)
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(seed, 7))
			for n := 0; n < 20; n++ {
				want := 1 + rnd.IntN(3)
				leases, err := s.AcquireN(ctx, want)
				if err != nil {
					t.Error(err)
					return
				}
				v := inUse.Add(int64(want))
				for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
				}
				if v > max {
					t.Errorf("%d leases in use, max %d", v, max)
				}
				time.Sleep(time.Duration(rnd.IntN(3)) * time.Millisecond)
				inUse.Add(-int64(want))
				if err := s.ReturnAll(ctx, leases); err != nil {
					t.Error(err)
				}
				cycles.Add(1)
			}
		}(uint64(i))
	}
	wg.Wait()
	t.Logf("cycles %d, peak leases in use %d (max %d)", cycles.Load(), peak.Load(), max)
	if cycles.Load() != 200 || peak.Load() > max {
		t.Fatalf("cycles %d, peak %d", cycles.Load(), peak.Load())
	}
}

// Curator's testThreads: one instance shared by 10 goroutines, max 1.
func TestSemaphoreSharedInstance(t *testing.T) {
	s := newSem(t, testenv.Client(t, testenv.Shared().ConnectString()), semPath(t), 1)
	ctx := testenv.Ctx(t, time.Minute)
	var inside atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := s.Acquire(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			if inside.Add(1) != 1 {
				t.Error("two leases of a one-lease semaphore")
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			if err := l.Release(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// Curator's testThreadedLeaseIncrease, and lowering: waiting acquirers
// notice a raised shared maximum; a lowered one holds new acquirers back.
func TestSemaphoreSharedCount(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := semPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	count, err := shared.NewCount(c, path+"-count", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := count.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer count.Close()
	s, err := semaphore.NewWithSharedCount(c, path, count)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *semaphore.Lease, 1)
	go func() {
		l, err := s.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	testenv.WaitFor(t, testenv.WaitShort, "the second acquirer to wait", func() bool { return len(leaseNodes(t, c, path)) == 2 })
	// A count Curator's 4 bytes cannot hold is refused, not truncated
	// (1<<32+1 would be stored as 1).
	if err := count.SetCount(ctx, 1<<32+1); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Fatalf("SetCount(1<<32+1): %v, want ErrInvalidArgument", err)
	}
	if ok, err := count.TrySetCount(ctx, count.VersionedValue(), -1<<40); ok || !errors.Is(err, curator.ErrInvalidArgument) {
		t.Fatalf("TrySetCount(-1<<40): %v %v, want ErrInvalidArgument", ok, err)
	}
	ok, err := count.TrySetCount(ctx, count.VersionedValue(), 2)
	if err != nil || !ok {
		t.Fatalf("TrySetCount %v %v (a refused value must write nothing)", ok, err)
	}
	second := <-got
	if second == nil {
		t.FailNow()
	}
	// Lower to 1 with two held: a third waits until both are back. Granted
	// before the second is even being released, it was granted over the
	// maximum (whenever that shows).
	if err := count.SetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the count to be seen", func() bool { return count.Count() == 1 })
	var secondGoing atomic.Bool
	go func() {
		l, err := s.Acquire(ctx)
		if err != nil {
			t.Error(err)
		} else if !secondGoing.Load() {
			t.Error("granted over a lowered maximum: the third lease came while the second was held")
		}
		got <- l
	}()
	testenv.WaitFor(t, testenv.WaitShort, "the third acquirer's lease node", func() bool { return len(leaseNodes(t, c, path)) == 3 })
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The third's node and the second's are left: the third decides on the
	// read that follows the first's deletion.
	testenv.WaitFor(t, testenv.WaitShort, "the first lease gone", func() bool { return len(leaseNodes(t, c, path)) == 2 })
	testenv.NotYet(t, got, "the third Acquire over a lowered maximum")
	secondGoing.Store(true)
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
	third := <-got // Acquire ends with ctx at the latest
	if third == nil {
		t.FailNow()
	}
	if err := third.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A stale version is refused.
	stale := count.VersionedValue()
	stale.Version--
	if ok, err := count.TrySetCount(ctx, stale, 9); ok || err != nil {
		t.Fatalf("stale TrySetCount: %v %v", ok, err)
	}
	raw, _, err := c.Get(ctx, path+"-count")
	if err != nil || len(raw) != 4 || raw[3] != 1 {
		t.Fatalf("count node data %v %v (Curator's 4-byte big-endian)", raw, err)
	}
}

// Curator's testClientClose: a closed client's lease goes back.
func TestSemaphoreClientClose(t *testing.T) {
	path := semPath(t)
	c1, err := framework.New(testenv.Shared().ConnectString(), framework.WithSessionTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c1.Close() }) // should the test end before it closes c1 (Close is idempotent)
	ctx := testenv.Ctx(t, time.Minute)
	l, err := newSem(t, c1, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost():
	default:
		t.Fatal("lease of a closed client not lost")
	}
	if _, err := newSem(t, testenv.Client(t, testenv.Shared().ConnectString()), path, 1).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
}

// No orphaned lease node or watch after timed-out, cancelled and tried
// acquires (CURATOR-335, CURATOR-462, Curator's testNoOrphanedNodes).
func TestSemaphoreNoOrphans(t *testing.T) {
	srv := zktest.StartServer(t)
	path := semPath(t)
	hc := testenv.Client(t, srv.ConnectString())
	ctx := testenv.Ctx(t, 2*time.Minute)
	holder, err := newSem(t, hc, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var clients []*framework.Client
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		c := testenv.Client(t, srv.ConnectString())
		clients = append(clients, c)
		s := newSem(t, c, path, 1)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for r := 0; r < 4; r++ {
				switch (i + r) % 3 {
				case 0:
					tctx, cancel := context.WithTimeout(ctx, time.Duration(20+10*r)*time.Millisecond)
					_, err := s.Acquire(tctx)
					cancel()
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("timed: %v", err)
					}
				case 1:
					cctx, cancel := context.WithCancel(ctx)
					time.AfterFunc(time.Duration(5*r)*time.Millisecond, cancel)
					_, err := s.Acquire(cctx)
					cancel()
					if !errors.Is(err, context.Canceled) {
						t.Errorf("cancelled: %v", err)
					}
				case 2:
					if _, err := s.TryAcquire(ctx); !errors.Is(err, curator.ErrLocked) {
						t.Errorf("try: %v", err)
					}
				}
			}
		}(i)
	}
	wg.Wait()
	testenv.WaitFor(t, 30*time.Second, "only the holder's lease", func() bool { return len(leaseNodes(t, hc, path)) == 1 })
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "no lease or lock node and no watch", func() bool {
		locks, _, _ := hc.Children(ctx, path+"/locks")
		n, err := srv.WatchCount()
		return err == nil && n == 0 && len(leaseNodes(t, hc, path)) == 0 && len(locks) == 0
	})
	for _, c := range append(clients, hc) {
		if _, waiters := c.WatchStats(); waiters != 0 {
			t.Errorf("client keeps %d waiters", waiters)
		}
	}
	if _, err := newSem(t, hc, path, 1).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
}

// A lease holder's session expires: its lease is lost (and told), and
// returns to the others.
func TestSemaphoreHolderSessionExpires(t *testing.T) {
	srv := zktest.StartServer(t)
	px := zktest.StartProxy(t, srv.ConnectString())
	ca := testenv.Client(t, px.Addr())
	cb := testenv.Client(t, srv.ConnectString())
	path := semPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	l, err := newSem(t, ca, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := newSem(t, cb, path, 1).Acquire(ctx); got <- err }()
	if err := zktest.ExpireSession(ctx, px, srv, ca.Session().ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost():
	case <-ctx.Done():
		t.Fatal("holder not told")
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("release of a lost lease: %v, want ErrLockLost", err)
	}
}

// Curator's testAcquireAfterLostServer (CURATOR-335): after the server was
// gone long enough to lose sessions, acquisitions work again and no orphan
// lease is left.
func TestSemaphoreAfterLostServer(t *testing.T) {
	srv := zktest.StartServer(t)
	c := testenv.Client(t, srv.ConnectString())
	path := semPath(t)
	ctx := testenv.Ctx(t, 2*time.Minute)
	s := newSem(t, c, path, 1)
	l, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := make(chan framework.State, 64)
	c.AddListener(func(st framework.State) {
		select { // never block the client's listener
		case states <- st:
		default:
		}
	})
	waiting := make(chan error, 1)
	go func() { _, err := newSem(t, c, path, 1).Acquire(ctx); waiting <- err }()
	testenv.WaitFor(t, testenv.WaitShort, "the waiter's lease node", func() bool { return len(leaseNodes(t, c, path)) == 2 })
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	for testenv.Recv(t, states, testenv.WaitLong, "the session lost with the server gone") != framework.StateLost {
	}
	if err := <-waiting; err == nil {
		t.Fatal("a waiter whose session was lost got a lease")
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("release of a lease whose session was lost: %v", err)
	}
	// The client connects again in a session of its own time: an acquire
	// sent before then waits one connection timeout (5 s here), and under
	// the whole suite's load the server restarted and the reconnection
	// once took longer (connection loss, not connected within the
	// connection timeout). The acquisitions are what this test is about.
	for testenv.Recv(t, states, testenv.WaitLong, "the client connected again") != framework.StateReconnected {
	}
	for i := 0; i < 5; i++ {
		l, err := s.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 30*time.Second, "no lease nodes", func() bool { return len(leaseNodes(t, c, path)) == 0 })
}

// Bad input gets typed errors and touches nothing.
func TestSemaphoreBadInput(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"max 0", func() error { _, err := semaphore.New(c, "/s", 0); return err }()},
		{"max -1", func() error { _, err := semaphore.New(c, "/s", -1); return err }()},
		{"nil client", func() error { _, err := semaphore.New(nil, "/s", 1); return err }()},
		{"bad path", func() error { _, err := semaphore.New(c, "s", 1); return err }()},
		{"root", func() error { _, err := semaphore.New(c, "/", 1); return err }()},
		{"nil count", func() error { _, err := semaphore.NewWithSharedCount(c, "/s", nil); return err }()},
		{"mutex bad path", func() error { _, err := semaphore.NewMutex(c, ""); return err }()},
	} {
		if !errors.Is(tc.err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
	}
	path := semPath(t)
	s := newSem(t, c, path, 2)
	if _, err := s.AcquireN(ctx, 0); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("AcquireN(0): %v", err)
	}
	if _, err := s.AcquireN(ctx, 3); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("AcquireN(3) of a semaphore of 2: %v", err)
	}
	//lint:ignore SA1012 testing nil
	if _, err := s.Acquire(nil); !errors.Is(err, curator.ErrInvalidArgument) { //nolint:staticcheck
		t.Errorf("nil ctx: %v", err)
	}
	if err := s.Return(ctx, nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil lease: %v", err)
	}
	if err := s.Return(ctx, &semaphore.Lease{}); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("a lease not from Acquire: %v", err)
	}
	if n := len(leaseNodes(t, c, path)); n != 0 {
		t.Fatalf("bad input made %d lease nodes", n)
	}
	l, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := newSem(t, c, semPath(t), 1)
	if err := other.Return(ctx, l); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("foreign lease: %v", err)
	}
	if err := s.Return(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("second release: %v", err)
	}
}

// The semaphore mutex: exclusive across clients, not reentrant, typed errors.
// Each holder stays inside 2 ms, so the counter would see a second holder
// of a mutex that excludes nothing; and inside, the holder's lease node is
// first among the leases on the server (the count rule let it in alone,
// and any node made since has a higher sequence), a check timing cannot
// defeat.
func TestSemaphoreMutex(t *testing.T) {
	path := semPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	var inside, total atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		c := testenv.Client(t, testenv.Shared().ConnectString())
		m, err := semaphore.NewMutex(c, path)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 6; r++ {
				if err := m.Lock(ctx); err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) != 1 {
					t.Error("two holders")
				}
				if err := testenv.IsFirst(c, m.Node()); err != nil {
					t.Error(err)
				}
				time.Sleep(2 * time.Millisecond) // the hold, so a second holder would overlap it
				inside.Add(-1)
				total.Add(1)
				if err := m.Unlock(ctx); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if total.Load() != 30 {
		t.Fatalf("%d acquisitions", total.Load())
	}
	m, _ := semaphore.NewMutex(testenv.Client(t, testenv.Shared().ConnectString()), path)
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("unlock not held: %v", err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := m.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("not reentrant: second Lock: %v", err)
	}
	other, _ := semaphore.NewMutex(testenv.Client(t, testenv.Shared().ConnectString()), path)
	if err := other.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Errorf("TryLock of a held mutex: %v", err)
	}
	if !m.IsAcquiredInThisProcess() || m.Node() == "" {
		t.Error("holder state")
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	var _ curator.Locker = m
}

// Any goroutine may Unlock the mutex, also one that sees it held the
// moment it is (IsAcquiredInThisProcess): it finds the holding complete,
// telemetry included, with no access the race detector flags.
func TestSemaphoreMutexUnlockedElsewhereAtOnce(t *testing.T) {
	m, err := semaphore.NewMutex(testenv.Client(t, testenv.Shared().ConnectString()), semPath(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Ctx(t, testenv.WaitShort)
	locked := make(chan error, 1)
	go func() { locked <- m.Lock(ctx) }()
	testenv.WaitFor(t, testenv.WaitShort, "the mutex held", m.IsAcquiredInThisProcess)
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock from another goroutine: %v", err)
	}
	if err := <-locked; err != nil {
		t.Fatal(err)
	}
}

// errTestOver ends the context of a test's workers when the test ends
// early (it failed): they stop without a word of their own.
var errTestOver = errors.New("the test is over")

// A 3-node ensemble loses a member mid-run: no lease is granted twice
// (counting holders not told of a loss) and everyone finishes.
func TestSemaphoreCluster(t *testing.T) {
	cl := zktest.StartCluster(t, 3)
	path := semPath(t)
	const max = 2
	ctx, cancel := context.WithCancelCause(testenv.Ctx(t, 3*time.Minute))
	var mu sync.Mutex
	active := map[*semaphore.Lease]bool{}
	var violations, done atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		s := newSem(t, testenv.Client(t, cl.ConnectString(), framework.WithSessionTimeout(6*time.Second)), path, max)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 10; {
				l, err := s.Acquire(ctx)
				if err != nil {
					if ctx.Err() != nil {
						if !errors.Is(context.Cause(ctx), errTestOver) {
							t.Error(err)
						}
						return
					}
					continue
				}
				mu.Lock()
				live := 0
				for a := range active {
					select {
					case <-a.Lost():
					default:
						live++
					}
				}
				select {
				case <-l.Lost():
				default:
					if live >= max {
						violations.Add(1)
					}
				}
				active[l] = true
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				delete(active, l)
				mu.Unlock()
				// The release rule: nil, or a loss the holder was told of.
				if err := l.Release(ctx); err != nil && !errors.Is(err, curator.ErrLockLost) {
					t.Errorf("release: %v, want nil or ErrLockLost", err)
				}
				n++
				done.Add(1)
			}
		}()
	}
	// After the clients: should the test end early, the acquirers stop
	// before their clients close and before the test is over.
	t.Cleanup(func() { cancel(errTestOver); wg.Wait() })
	testenv.WaitFor(t, time.Minute, "work before the fault", func() bool { return done.Load() >= 10 })
	leader, err := cl.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Members()[leader].Stop(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 2*time.Minute, "work after the fault", func() bool { return done.Load() >= 30 })
	if err := cl.Members()[leader].Start(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d grants over the maximum", v)
	}
}
