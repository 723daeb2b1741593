package locks_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// Mutual exclusion: 10 clients (sessions), two goroutines sharing each
// client's Mutex, 300 acquisitions. Each holder stays inside for 2 ms, so
// an in-test counter would see a second holder of a lock that excludes
// nothing; and inside, the holder's node is first among the lock's
// children on the server (a check timing cannot defeat).
func TestMutexExclusion(t *testing.T) {
	path := lockPath(t)
	const clients, goroutines, rounds = 10, 2, 15
	var inside, maxInside, total atomic.Int64
	var wg sync.WaitGroup
	ctx := testenv.Ctx(t, 2*time.Minute)
	for i := 0; i < clients; i++ {
		c := testenv.Client(t, testenv.Shared().ConnectString())
		m := newMutex(t, c, path)
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					if err := m.Lock(ctx); err != nil {
						t.Error(err)
						return
					}
					n := inside.Add(1)
					if n > maxInside.Load() {
						maxInside.Store(n)
					}
					if n != 1 {
						t.Errorf("%d holders at once", n)
					}
					if err := testenv.IsFirst(c, m.Node()); err != nil {
						t.Error(err)
					}
					time.Sleep(2 * time.Millisecond) // the hold, so a second holder would overlap it
					total.Add(1)
					inside.Add(-1)
					if err := m.Unlock(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if got := total.Load(); got != clients*goroutines*rounds {
		t.Fatalf("acquisitions = %d, want %d", got, clients*goroutines*rounds)
	}
	if maxInside.Load() != 1 {
		t.Fatalf("max holders = %d", maxInside.Load())
	}
}

// No herd: 50 waiters in 50 sessions; each lock node is watched by at most
// two sessions (its successor, and its owner's mark for the waiter right
// behind the holder, which may hold without a read: driver/handoff.go, 5.),
// so a release wakes one waiter, and it holds.
func TestMutexNoHerd(t *testing.T) {
	srv := zktest.StartServer(t)
	path := lockPath(t)
	holderClient := testenv.Client(t, srv.ConnectString())
	holder := newMutex(t, holderClient, path)
	ctx := testenv.Ctx(t, 2*time.Minute)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	const waiters = 50
	var acquired atomic.Int64
	proceed := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < waiters; i++ {
		m := newMutex(t, testenv.Client(t, srv.ConnectString()), path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Lock(ctx); err != nil {
				t.Error(err)
				return
			}
			acquired.Add(1)
			<-proceed
			if err := m.Unlock(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	// Under the lock path, one watch per waiter, on its predecessor, and
	// the first waiter's mark on its own node: the others' predecessors
	// have another client's contender before them, whose going their
	// client will not learn, so they read the queue when woken and need
	// no mark. (The path itself keeps one data watch per client that took
	// the lock, framework.Mark: it fires on the path's deletion, not on
	// its children.)
	watches := func() (nodes, all int) {
		for _, sessions := range testenv.WatchedUnder(t, srv, path) {
			nodes++
			all += sessions
		}
		return nodes, all
	}
	testenv.WaitFor(t, time.Minute, "51 contenders, 50 watched nodes, 51 watches", func() bool {
		nodes, all := watches()
		return nodes == waiters && all == waiters+1 && len(testenv.Children(t, holderClient, path)) == waiters+1
	})
	for node, sessions := range testenv.WatchedUnder(t, srv, path) {
		if sessions > 2 {
			t.Errorf("%s watched by %d sessions", node, sessions)
		}
	}
	// And no child watch: one on the lock path would wake its waiter on
	// every create and delete there, a herd the counts above cannot see
	// (ZooKeeper 3.8's wchp lists data watches only; mntr counts both).
	all, err := srv.WatchCount()
	if err != nil {
		t.Fatal(err)
	}
	data, err := srv.DataWatchCount()
	if err != nil {
		t.Fatal(err)
	}
	if all != data {
		t.Errorf("%d watches in all, %d data watches: %d child watches, want none", all, data, all-data)
	}
	byPath, err := srv.WatchesByPath()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(byPath[path]); n > waiters+1 {
		t.Errorf("the lock path is watched by %d sessions, more than the %d clients", n, waiters+1)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "one waiter to acquire", func() bool { return acquired.Load() == 1 })
	// The holder's node and the watch on it are gone: the new holder's
	// node keeps its successor's and its own mark; nobody else woke.
	testenv.WaitFor(t, 30*time.Second, "49 watched nodes, 50 watches left", func() bool {
		nodes, all := watches()
		return nodes == waiters-1 && all == waiters
	})
	if got := acquired.Load(); got != 1 {
		t.Fatalf("a release woke %d holders", got)
	}
	close(proceed)
	wg.Wait()
	if acquired.Load() != waiters {
		t.Fatalf("acquired %d of %d", acquired.Load(), waiters)
	}
}

// After a run full of timed-out, cancelled and tried acquisitions, the
// server's watch count and the lock path's children return to zero, and no
// client keeps a waiter.
func TestMutexNoLeaks(t *testing.T) {
	srv := zktest.StartServer(t)
	path := lockPath(t)
	hc := testenv.Client(t, srv.ConnectString())
	holder := newMutex(t, hc, path)
	ctx := testenv.Ctx(t, 2*time.Minute)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	var clients []*framework.Client
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		c := testenv.Client(t, srv.ConnectString())
		clients = append(clients, c)
		for g := 0; g < 3; g++ {
			m := newMutex(t, c, path)
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for r := 0; r < 5; r++ {
					var err error
					switch (g + r) % 3 {
					case 0: // deadline
						tctx, cancel := context.WithTimeout(ctx, time.Duration(10+r*10)*time.Millisecond)
						err = m.Lock(tctx)
						cancel()
						if !errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("timed lock: %v", err)
						}
					case 1: // cancel
						cctx, cancel := context.WithCancel(ctx)
						time.AfterFunc(time.Duration(r*5)*time.Millisecond, cancel)
						err = m.Lock(cctx)
						cancel()
						if !errors.Is(err, context.Canceled) {
							t.Errorf("cancelled lock: %v", err)
						}
					case 2:
						if err = m.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
							t.Errorf("trylock: %v", err)
						}
					}
				}
			}(g)
		}
	}
	wg.Wait()
	testenv.WaitFor(t, 30*time.Second, "only the holder's node left", func() bool { return len(testenv.Children(t, hc, path)) == 1 })
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "no lock nodes and no server watches", func() bool {
		n, err := srv.WatchCount()
		return err == nil && n == 0 && len(testenv.Children(t, hc, path)) == 0
	})
	for _, c := range append(clients, hc) {
		if _, waiters := c.WatchStats(); waiters != 0 {
			t.Errorf("client keeps %d waiters", waiters)
		}
		if err := c.WaitBackground(ctx); err != nil {
			t.Error(err)
		}
	}
}

// Reentrancy is explicit: the context Acquire/Do hand out re-enters,
// counted like Curator's; other goroutines on the same instance block.
func TestMutexReentrancy(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := lockPath(t)
	m := newMutex(t, c, path)
	ctx := testenv.Ctx(t, time.Minute)
	hctx, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := m.Node()
	for i := 0; i < 2; i++ {
		if err := m.Lock(hctx); err != nil {
			t.Fatal(err)
		}
	}
	err = m.Do(hctx, func(inner context.Context) error {
		if m.Node() != node {
			t.Errorf("re-entered with a new node")
		}
		return m.Do(inner, func(context.Context) error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	// Another goroutine (plain context) must block while held.
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := m.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("other goroutine: %v, want deadline", err)
	}
	for i := 0; i < 3; i++ {
		if !m.IsAcquiredInThisProcess() {
			t.Fatalf("released after %d of 3 unlocks", i)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if m.IsAcquiredInThisProcess() {
		t.Fatal("still held after 3 unlocks")
	}
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Fatalf("extra unlock: %v", err)
	}
	if hctx.Err() == nil {
		t.Fatal("held context not cancelled on release")
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
}

// Curator's testReentrantSingleLock: 10 goroutines share one instance.
func TestMutexSharedInstance(t *testing.T) {
	m := newMutex(t, testenv.Client(t, testenv.Shared().ConnectString()), lockPath(t))
	ctx := testenv.Ctx(t, time.Minute)
	var inside atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := m.Do(ctx, func(context.Context) error {
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d goroutines inside", n)
				}
				time.Sleep(5 * time.Millisecond) // hold briefly so others queue
				inside.Add(-1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// Curator's test2Clients: exactly one of two clients holds; the other gets
// it after the release.
func TestMutexTwoClients(t *testing.T) {
	path := lockPath(t)
	m1 := newMutex(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
	m2 := newMutex(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
	ctx := testenv.Ctx(t, time.Minute)
	if err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- m2.Lock(ctx) }()
	if err := m2.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		// m2's own instance is busy with the pending Lock: TryLock on it
		// reports ErrLocked at once either way.
		t.Fatalf("TryLock: %v", err)
	}
	parts, err := m1.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "two participants", func() bool {
		parts, err = m1.Participants(ctx)
		return err == nil && len(parts) == 2
	})
	if parts[0] != m1.Node() {
		t.Fatalf("participants %v: holder %s not first", parts, m1.Node())
	}
	if err := m1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if !m2.IsAcquiredInThisProcess() || m1.IsAcquiredInThisProcess() {
		t.Fatal("wrong holder")
	}
	if err := m2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Bad input gets a clear, typed error and changes nothing.
func TestMutexBadInput(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	for _, p := range []string{"", "x", "/", "/a/", "/a//b", "/a/./b", "/a/../b", "/a\x00b"} {
		if _, err := locks.NewMutex(c, p); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("NewMutex(%q): %v", p, err)
		}
		if _, err := locks.NewReadWriteLock(c, p); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("NewReadWriteLock(%q): %v", p, err)
		}
	}
	if _, err := locks.NewMutex(nil, "/a"); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil client: %v", err)
	}
	path := lockPath(t)
	m := newMutex(t, c, path)
	ctx := testenv.Ctx(t, time.Minute)
	//lint:ignore SA1012 testing nil
	if err := m.Lock(nil); !errors.Is(err, curator.ErrInvalidArgument) { //nolint:staticcheck
		t.Errorf("nil ctx: %v", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("unlock not held: %v", err)
	}
	if err := m.Do(ctx, nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil fn: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.Lock(done); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
	zero, cancel0 := context.WithTimeout(ctx, 0)
	defer cancel0()
	if err := m.Lock(zero); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("zero timeout: %v", err)
	}
	neg, cancelN := context.WithTimeout(ctx, -time.Second)
	defer cancelN()
	if err := m.Lock(neg); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("negative timeout: %v", err)
	}
	if _, err := m.FencingToken(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("token when not held: %v", err)
	}
	if _, err := m.GuardedMulti(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("guarded multi when not held: %v", err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("second unlock: %v", err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("bad input left nodes: %v", kids)
	}
	select {
	case <-m.Lost():
	default:
		t.Error("Lost() of an unheld mutex must be closed")
	}
	closed, err := framework.New(testenv.Shared().ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	mc := newMutex(t, closed, path)
	start := time.Now()
	if err := mc.Lock(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("closed client: %v", err)
	}
	// At once: logged, not judged, but for a bound only a hang reaches.
	t.Logf("Lock on a closed client failed after %v", time.Since(start))
	if d := time.Since(start); d > testenv.WaitShort {
		t.Errorf("closed client took %v to fail", d)
	}
}

// Curator's testContainerCleanup: an unused lock path is reaped by the server.
func TestMutexContainerCleanup(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := lockPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		m := newMutex(t, c, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Do(ctx, func(context.Context) error { return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	testenv.WaitFor(t, 30*time.Second, "the lock path to be reaped", func() bool {
		ok, _, err := c.Exists(ctx, path)
		return err == nil && !ok
	})
}

// Curator's testWithNamespace.
func TestMutexWithNamespace(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString(), framework.WithNamespace("test"))
	m := newMutex(t, c, "/locks/ns-lock")
	ctx := testenv.Ctx(t, time.Minute)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	raw := testenv.Client(t, testenv.Shared().ConnectString())
	kids := testenv.Children(t, raw, "/test/locks/ns-lock")
	if len(kids) != 1 || framework.NormalizeName(kids[0]) != "lock-"+kids[0][len(kids[0])-10:] {
		t.Fatalf("server sees %v", kids)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Curator's testRevoking: a revocable holder releases when asked.
func TestMutexRevoking(t *testing.T) {
	path := lockPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	var m1 *locks.Mutex
	revoked := make(chan struct{})
	m1 = newMutex(t, testenv.Client(t, testenv.Shared().ConnectString()), path, locks.WithRevocation(func(held context.Context) {
		m1.Unlock(held)
		close(revoked)
	}))
	if err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	c2 := testenv.Client(t, testenv.Shared().ConnectString())
	m2 := newMutex(t, c2, path)
	parts, err := m2.Participants(ctx)
	if err != nil || len(parts) != 1 {
		t.Fatalf("participants %v %v", parts, err)
	}
	if err := locks.Revoke(ctx, c2, parts[0]); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := m2.Lock(tctx); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, revoked, testenv.WaitShort, "the revoked holder's release")
	if err := m2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := locks.Revoke(ctx, c2, parts[0]); err != nil {
		t.Fatalf("revoking a gone node: %v", err)
	}
}

// Curator's TestLockInternals testNodeDeletedCleanlyWithFaults: a waiter
// whose own node vanishes stops with ErrNodeVanished instead of waiting
// forever (CURATOR-527), and leaves nothing behind.
func TestMutexOwnNodeVanishes(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := lockPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	holder := newMutex(t, c, path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := newMutex(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
	errc := make(chan error, 1)
	go func() { errc <- waiter.Lock(ctx) }()
	var victim string
	testenv.WaitFor(t, testenv.WaitShort, "the waiter's node", func() bool {
		parts, _ := holder.Participants(ctx)
		if len(parts) == 2 {
			victim = parts[1]
			return true
		}
		return false
	})
	if err := c.Delete(ctx, victim); err != nil {
		t.Fatal(err)
	}
	// The waiter watches the holder's node, not its own: it learns when it
	// looks again, i.e. at the next change.
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, curator.ErrNodeVanished) {
		t.Fatalf("waiter: %v, want ErrNodeVanished", err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("left behind: %v", kids)
	}
}

// Fencing tokens strictly increase from holder to holder, also across a
// reaped and recreated lock path (where sequence numbers restart).
func TestMutexFencingToken(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := lockPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	var last int64
	for i := 0; i < 3; i++ {
		m := newMutex(t, c, path)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		tok, err := m.FencingToken(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tok <= last {
			t.Fatalf("token %d after %d", tok, last)
		}
		last = tok
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 30*time.Second, "the lock path to be reaped", func() bool {
			ok, _, err := c.Exists(ctx, path)
			return err == nil && !ok
		})
	}
}

// Guarded writes succeed only while the lock is held.
func TestMutexGuardedMulti(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := lockPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	data := path + "-data"
	if _, err := c.Create(ctx, data, []byte("0"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	m := newMutex(t, c, path)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GuardedMulti(ctx, framework.SetDataOp{Path: data, Data: []byte("1"), Version: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FencingToken(ctx); err != nil { // read, and kept by the holding
		t.Fatal(err)
	}
	// Someone deletes our lock node: the guard must refuse.
	if err := c.Delete(ctx, m.Node()); err != nil {
		t.Fatal(err)
	}
	_, err := m.GuardedMulti(ctx, framework.SetDataOp{Path: data, Data: []byte("2"), Version: -1})
	if !errors.Is(err, curator.ErrLockLost) || !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("guarded write without the lock: %v", err)
	}
	got, _, err := c.Get(ctx, data)
	if err != nil || string(got) != "1" {
		t.Fatalf("data %q %v, want 1", got, err)
	}
	select {
	case <-m.Lost(): // the guard saw the loss: it is recorded
	default:
		t.Fatal("Lost not closed after the guard found the node gone")
	}
	if tok, err := m.FencingToken(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("fencing token of a lost lock: %d, %v; want ErrLockLost, also when the token was read before", tok, err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) { // issue 14 item 4
		t.Fatalf("unlock of a lost lock: %v, want ErrLockLost", err)
	}
}

// Do releases its own holding and never a later one: here a revocation
// callback releases Do's holding while fn runs, and another goroutine of
// the instance takes the lock before fn returns. Do's release finds its
// holding released (ErrNotHeld) and leaves the other goroutine's alone:
// no other process can take the lock while that goroutine holds.
func TestMutexDoReleasesItsOwnHoldingOnly(t *testing.T) {
	path := lockPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	var m *locks.Mutex
	revoked := make(chan error, 1)
	m = newMutex(t, testenv.Client(t, testenv.Shared().ConnectString()), path, locks.WithRevocation(func(held context.Context) {
		revoked <- m.Unlock(held)
	}))
	op := testenv.Client(t, testenv.Shared().ConnectString())
	var second context.Context
	err := m.Do(ctx, func(fctx context.Context) error {
		if err := locks.Revoke(ctx, op, m.Node()); err != nil {
			return err
		}
		select {
		case err := <-revoked:
			if err != nil {
				return fmt.Errorf("the callback's Unlock: %w", err)
			}
		case <-ctx.Done():
			return fmt.Errorf("the revocation callback was not called: %w", ctx.Err())
		}
		var err error
		second, err = m.Acquire(ctx) // another goroutine's, as far as the lock knows
		return err
	})
	if !errors.Is(err, curator.ErrNotHeld) {
		t.Fatalf("Do, its holding released by the callback: %v, want ErrNotHeld", err)
	}
	if second == nil || second.Err() != nil || !m.IsAcquiredInThisProcess() {
		t.Fatal("the second holding was released by Do")
	}
	other := newMutex(t, op, path)
	if err := other.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("another process's TryLock while the second holding holds: %v, want ErrLocked", err)
	}
	if err := m.Unlock(second); err != nil {
		t.Fatal(err)
	}
}

// A revocation callback that runs late, after its holding was released
// and the lock taken again, releases nothing with Unlock(held): that
// holding is not held (ErrNotHeld), the new one stays.
func TestMutexLateRevocationReleasesNoLaterHolding(t *testing.T) {
	path := lockPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	var m *locks.Mutex
	entered, gate, called := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	m = newMutex(t, testenv.Client(t, testenv.Shared().ConnectString()), path, locks.WithRevocation(func(held context.Context) {
		close(entered)
		<-gate
		called <- m.Unlock(held)
	}))
	first, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	op := testenv.Client(t, testenv.Shared().ConnectString())
	if err := locks.Revoke(ctx, op, m.Node()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered: // the callback runs, held back
	case <-ctx.Done():
		t.Fatal("the revocation callback was not called")
	}
	if err := m.Unlock(first); err != nil {
		t.Fatal(err)
	}
	second, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	close(gate)
	select {
	case err := <-called:
		if !errors.Is(err, curator.ErrNotHeld) {
			t.Fatalf("the late callback's Unlock: %v, want ErrNotHeld", err)
		}
	case <-ctx.Done():
		t.Fatal("the late callback's Unlock did not return")
	}
	if second.Err() != nil || !m.IsAcquiredInThisProcess() {
		t.Fatal("the late callback released the second holding")
	}
	if err := m.Unlock(second); err != nil {
		t.Fatal(err)
	}
}

// Unlock with the held context (the revocation callback's way) reports a
// loss it finds as Unlock with any context does: the release ends the held
// context, and that must not cut its delete short.
func TestMutexUnlockHeldFindsTheLoss(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	m := newMutex(t, c, lockPath(t))
	held, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, m.Node()); err != nil { // an operator
		t.Fatal(err)
	}
	if err := m.Unlock(held); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("Unlock(held) of a lock whose node is gone: %v, want ErrLockLost", err)
	}
	held, err = m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := m.Node()
	if err := m.Unlock(held); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := c.Exists(ctx, node); err != nil || ok {
		t.Fatalf("node after Unlock(held) returned: exists %v (%v); want deleted then, not in the background", ok, err)
	}
}

// A held context that outlives its holding (context.WithoutCancel of
// Do's, handed to a job) takes a new holding with Lock, and Unlock with
// that same context releases it: Lock and Unlock with one context pair
// up, and the instance is not left held for good.
func TestMutexDetachedHeldContextPairsUp(t *testing.T) {
	ctx := testenv.Ctx(t, time.Minute)
	m := newMutex(t, testenv.Client(t, testenv.Shared().ConnectString()), lockPath(t))
	var detached context.Context
	if err := m.Do(ctx, func(fctx context.Context) error {
		detached = context.WithoutCancel(fctx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(detached); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(detached); err != nil {
		t.Fatalf("Unlock with the context Lock took the holding with: %v", err)
	}
	if m.IsAcquiredInThisProcess() {
		t.Fatal("still held after its Unlock")
	}
	if err := m.TryLock(ctx); err != nil {
		t.Fatalf("the instance after that: %v", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
