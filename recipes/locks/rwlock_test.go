package locks_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

func newRW(t testing.TB, c *framework.Client, path string, opts ...locks.Option) *locks.ReadWriteLock {
	t.Helper()
	rw, err := locks.NewReadWriteLock(c, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rw
}

// Curator's testGetParticipantNodes: 20 readers hold, 8 writers queue.
func TestRWParticipants(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := lockPath(t)
	ctx := testenv.Ctx(t, time.Minute)
	var readers []*locks.ReadWriteLock
	for i := 0; i < 20; i++ {
		rw := newRW(t, c, path)
		if err := rw.Read().Lock(ctx); err != nil {
			t.Fatal(err)
		}
		readers = append(readers, rw)
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		rw := newRW(t, c, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := rw.Write().Lock(wctx); !errors.Is(err, context.Canceled) {
				t.Errorf("writer: %v", err)
			}
		}()
	}
	// Each half lists its own nodes only, as Curator's getParticipantNodes
	// (issue 14 item 3: both used to list the whole queue).
	testenv.WaitFor(t, testenv.WaitShort, "8 write participants", func() bool {
		parts, err := readers[0].Write().Participants(ctx)
		return err == nil && len(parts) == 8
	})
	for _, half := range []struct {
		name, want string
		n          int
		m          interface {
			Participants(context.Context) ([]string, error)
		}
	}{{"Read", "__READ__", 20, readers[0].Read()}, {"Write", "__WRIT__", 8, readers[0].Write()}} {
		parts, err := half.m.Participants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != half.n {
			t.Errorf("%s().Participants: %d nodes, want %d: %v", half.name, len(parts), half.n, parts)
		}
		for _, p := range parts {
			if !strings.Contains(p, half.want) {
				t.Errorf("%s().Participants lists %s", half.name, p)
			}
		}
	}
	cancel()
	wg.Wait()
	for _, rw := range readers {
		if err := rw.Read().Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// Curator's testThatUpgradingIsDisallowed: an error, not a block.
func TestRWUpgradeRefused(t *testing.T) {
	rw := newRW(t, testenv.Client(t, testenv.Shared().ConnectString()), lockPath(t))
	ctx := testenv.Ctx(t, time.Minute)
	hctx, err := rw.Read().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Write().Lock(hctx); !errors.Is(err, curator.ErrUpgrade) {
		t.Fatalf("upgrade: %v", err)
	}
	if err := rw.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Curator's testDowngrading and testThatDowngradingRespectsThreads.
func TestRWDowngrade(t *testing.T) {
	c, path, rw, ctx, wctx := writeHeld(t)
	// Another goroutine (no held context) may not read during the write.
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := rw.Read().Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read by another goroutine during the write: %v", err)
	}
	// The writer itself may.
	tctx2, cancel2 := context.WithTimeout(wctx, 5*time.Second)
	defer cancel2()
	if err := rw.Read().Lock(tctx2); err != nil {
		t.Fatalf("downgrade: %v", err)
	}
	// A second downgrade through the same write hold re-enters (counted).
	if err := rw.Read().Lock(tctx2); err != nil {
		t.Fatalf("second downgrade: %v", err)
	}
	if err := rw.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := rw.Read().Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("left: %v", kids)
	}
}

// A downgrade through a write holding that is gone (here its node deleted
// by an operator, the holder not told yet; its context kept by
// context.WithoutCancel) takes no read: a writer after it may hold now,
// and a read node in the old writer's place would sort before it.
func TestRWNoDowngradeFromALostWrite(t *testing.T) {
	c, path, rw, ctx, wctx := writeHeld(t)
	op := testenv.Client(t, testenv.Shared().ConnectString())
	if err := op.Delete(ctx, rw.Write().Node()); err != nil {
		t.Fatal(err)
	}
	other := newRW(t, op, path)
	if err := other.Write().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer other.Write().Unlock(ctx)
	if err := rw.Read().Lock(context.WithoutCancel(wctx)); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("downgrade from a write whose node is gone, while another writer holds: %v, want ErrLockLost", err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 1 {
		t.Fatalf("left %v, want the other writer's node alone", kids)
	}
	if err := rw.Write().Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Errorf("release of the lost write: %v, want ErrLockLost", err)
	}
}

// Curator's testContendingDowngrading (CURATOR-621): a writer queued behind
// stays blocked after the first writer downgrades and releases the write.
func TestRWContendingDowngrade(t *testing.T) {
	path := lockPath(t)
	rw1 := newRW(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
	c2 := testenv.Client(t, testenv.Shared().ConnectString())
	rw2 := newRW(t, c2, path)
	ctx := testenv.Ctx(t, time.Minute)
	wctx, err := rw1.Write().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Got in before the downgraded read is even being released, the second
	// writer held beside it (whenever that shows).
	var readGoing atomic.Bool
	got := make(chan error, 1)
	go func() {
		err := rw2.Write().Lock(ctx)
		if err == nil && !readGoing.Load() {
			t.Error("second writer got in while the downgraded reader holds")
		}
		got <- err
	}()
	testenv.WaitFor(t, testenv.WaitShort, "the second writer to queue", func() bool { return len(testenv.Children(t, c2, path)) == 2 })
	if err := rw1.Read().Lock(wctx); err != nil {
		t.Fatal(err)
	}
	// The read holds in the writer's place, with the writer's fencing
	// token: its own node is younger than the second writer's, whose token
	// must still be above it.
	wtok, err := rw1.Write().FencingToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rtok, err := rw1.Read().FencingToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rtok != wtok {
		t.Fatalf("the downgraded read's token %d, its writer's %d: want the writer's", rtok, wtok)
	}
	if err := rw1.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	// The second writer has seen the write go when it watches the read
	// node, in the writer's place, instead.
	read := rw1.Read().Node()
	testenv.WaitFor(t, testenv.WaitShort, "the second writer to watch the downgraded read", func() bool {
		m, err := testenv.Shared().WatchesByPath()
		return err == nil && slices.Contains(m[read], c2.Session().ID())
	})
	testenv.NotYet(t, got, "the second writer, while the downgraded reader holds,")
	readGoing.Store(true)
	if err := rw1.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if tok, err := rw2.Write().FencingToken(ctx); err != nil || tok <= rtok {
		t.Fatalf("the second writer's token %d (%v) after the downgraded read's %d: tokens must increase", tok, err, rtok)
	}
	if err := rw2.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Curator's testBasic: 8 clients, 10% writes; a writer is alone, readers
// share; both kinds happen. How many readers overlapped is logged: it is
// up to the scheduler (TestRWParticipants shows readers sharing for sure).
func TestRWBasic(t *testing.T) {
	path := lockPath(t)
	ctx := testenv.Ctx(t, 2*time.Minute)
	var readers, writers, peak, reads, writes atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		c := testenv.Client(t, testenv.Shared().ConnectString())
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(seed, 1))
			rw := newRW(t, c, path)
			for n := 0; n < 40; n++ {
				if rnd.IntN(10) == 0 {
					err := rw.Write().Do(ctx, func(context.Context) error {
						if w := writers.Add(1); w != 1 || readers.Load() != 0 {
							t.Errorf("writer not alone: writers %d readers %d", w, readers.Load())
						}
						time.Sleep(time.Duration(1+rnd.IntN(5)) * time.Millisecond)
						writers.Add(-1)
						writes.Add(1)
						return nil
					})
					if err != nil {
						t.Error(err)
					}
				} else {
					err := rw.Read().Do(ctx, func(context.Context) error {
						r := readers.Add(1)
						if writers.Load() != 0 {
							t.Error("reader during a write")
						}
						for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
						}
						time.Sleep(time.Duration(1+rnd.IntN(5)) * time.Millisecond)
						readers.Add(-1)
						reads.Add(1)
						return nil
					})
					if err != nil {
						t.Error(err)
					}
				}
			}
		}(uint64(i))
	}
	wg.Wait()
	t.Logf("writes %d reads %d peak readers %d", writes.Load(), reads.Load(), peak.Load())
	if writes.Load() == 0 || reads.Load() == 0 {
		t.Fatalf("writes %d reads %d", writes.Load(), reads.Load())
	}
}

// kazoo#649: a reader must never wait on a later writer; interleaved
// readers and writers never stall.
func TestRWInterleavedNeverStalls(t *testing.T) {
	path := lockPath(t)
	ctx := testenv.Ctx(t, 2*time.Minute)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		c := testenv.Client(t, testenv.Shared().ConnectString())
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rw := newRW(t, c, path)
			for n := 0; n < 25; n++ {
				var half interface {
					Do(context.Context, func(context.Context) error) error
				} = rw.Read()
				if (i+n)%3 == 0 {
					half = rw.Write()
				}
				sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				err := half.Do(sctx, func(context.Context) error { return nil })
				cancel()
				if err != nil {
					t.Errorf("stalled or failed: %v", err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
}

// Curator's testSetNodeData: lock data lands in the node.
func TestRWNodeData(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := lockPath(t)
	data := []byte{1, 2, 3, 4}
	rw := newRW(t, c, path, locks.WithData(data))
	data[0] = 9 // the caller's later change must not matter
	ctx := testenv.Ctx(t, time.Minute)
	if err := rw.Write().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	kids := testenv.Children(t, c, path)
	if len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
	got, _, err := c.Get(ctx, path+"/"+kids[0])
	if err != nil || !bytes.Equal(got, []byte{1, 2, 3, 4}) {
		t.Fatalf("data %v %v", got, err)
	}
	if err := rw.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Curator's testLockPath: the writer's session expires; a reader of another
// client gets in; the old holder's node is gone and its release is quiet.
func TestRWWriterSessionExpires(t *testing.T) {
	srv := zktest.StartServer(t)
	px := zktest.StartProxy(t, srv.ConnectString())
	c1 := testenv.Client(t, px.Addr())
	c2 := testenv.Client(t, srv.ConnectString())
	path := lockPath(t)
	rw1, rw2 := newRW(t, c1, path), newRW(t, c2, path)
	ctx := testenv.Ctx(t, time.Minute)
	if err := rw1.Write().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := rw1.Write().Node()
	if err := zktest.ExpireSession(ctx, px, srv, c1.Session().ID()); err != nil {
		t.Fatal(err)
	}
	if err := rw2.Read().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := c2.Exists(ctx, node); err != nil || ok {
		t.Fatalf("old writer node exists=%v err=%v", ok, err)
	}
	if err := rw1.Write().Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("unlock of the expired writer: %v", err)
	}
	if err := rw2.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Curator's TestLockACLs: lock nodes and created parents carry the ACL
// provider's ACL, in a namespace.
func TestLockACLs(t *testing.T) {
	acl := []framework.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}, {Perms: 31, Scheme: "ip", ID: "127.0.0.1"}}
	c := testenv.Client(t, testenv.Shared().ConnectString(), framework.WithNamespace("ns-acl"),
		framework.WithACLProvider(framework.ACLFunc(func(string) []framework.ACL { return acl })))
	ctx := testenv.Ctx(t, time.Minute)
	m := newMutex(t, c, "/foo")
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	rw := newRW(t, c, "/bar")
	if err := rw.Write().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/foo", "/bar", m.Node(), rw.Write().Node()} {
		got, _, err := c.GetACL(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("%s ACL %v", p, got)
		}
	}
	m.Unlock(ctx)
	rw.Write().Unlock(ctx)
}

// Issue 14 item 3: the writer downgrades (Read().Lock with its held context)
// while another goroutine of the same ReadWriteLock waits for the read lock:
// the downgrade is at once, not stuck behind the waiter; the waiter gets the
// read lock once the downgraded hold is released.
func TestRWDowngradeWhileReaderWaits(t *testing.T) {
	c, path, rw, ctx, wctx := writeHeld(t)
	waiter := make(chan error, 1)
	go func() { waiter <- rw.Read().Lock(ctx) }()
	testenv.WaitFor(t, testenv.WaitShort, "the reader queued", func() bool {
		parts, err := rw.Read().Participants(ctx)
		if err != nil {
			return false
		}
		n := 0
		for _, p := range parts {
			if strings.Contains(p, "__READ__") {
				n++
			}
		}
		return n == 1
	})
	dctx, cancel := context.WithTimeout(wctx, 10*time.Second)
	defer cancel()
	if err := rw.Read().Lock(dctx); err != nil {
		t.Fatalf("downgrade while another goroutine waits to read: %v", err)
	}
	if err := rw.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waiter:
		t.Fatalf("the waiter took the read half while the downgraded hold is held: %v", err)
	default:
	}
	if err := rw.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waiter; err != nil {
		t.Fatalf("waiting reader: %v", err)
	}
	if err := rw.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "no nodes left", func() bool { return len(testenv.Children(t, c, path)) == 0 })
}

// Issue 14 item 3: re-entering through a held context whose hold was lost
// is ErrLockLost, not a silent success.
func TestMutexReentryAfterLoss(t *testing.T) {
	srv := zktest.StartServer(t)
	px := zktest.StartProxy(t, srv.ConnectString())
	c := testenv.Client(t, px.Addr())
	m := newMutex(t, c, lockPath(t))
	ctx := testenv.Ctx(t, time.Minute)
	hctx, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lost := m.Lost()
	px.Drop() // LoseOnSuspend: the connection loss loses the lock
	select {
	case <-lost:
	case <-ctx.Done():
		t.Fatal("lock not lost")
	}
	if err := m.Lock(hctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("reentrant Lock of a lost hold: %v, want ErrLockLost", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("Unlock: %v, want ErrLockLost", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Fatalf("second Unlock: %v, want ErrNotHeld (the failed reentry counted nothing)", err)
	}
}

// A downgrade cut short by the loss of its write holding (through whose
// context it runs: here the connection drops while the read node's create
// is in flight, and the write is lost on the suspension) says it was the
// loss, ErrLockLost, not the context's cancellation; and no read node
// stays.
func TestRWDowngradeCutShortByTheLoss(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	path := lockPath(t)
	rw := newRW(t, c, path, locks.WithSuspendPolicy(curator.LoseOnSuspend))
	ctx := testenv.Ctx(t, time.Minute)
	wctx, err := rw.Write().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := px.HoldReply(zktest.OpCreate)
	done := make(chan error, 1)
	go func() { done <- rw.Read().Lock(wctx) }()
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	held.Drop() // the create made the read node; the client never hears it
	if err := <-done; !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("downgrade cut short by the write's loss: %v, want ErrLockLost", err)
	}
	op := testenv.Client(t, testenv.Shared().ConnectString())
	testenv.WaitFor(t, testenv.WaitShort, "no read node left", func() bool {
		for _, k := range testenv.Children(t, op, path) {
			if strings.Contains(k, "__READ__") {
				return false
			}
		}
		return true
	})
	rw.Write().Unlock(ctx) // lost: ErrLockLost, its node goes
}

// writeHeld is a read-write lock on a path of its own whose write half a
// client of its own holds: the client, the path, the lock, the test's
// context and the held one.
func writeHeld(t *testing.T) (*framework.Client, string, *locks.ReadWriteLock, context.Context, context.Context) {
	t.Helper()
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := lockPath(t)
	rw := newRW(t, c, path)
	ctx := testenv.Ctx(t, time.Minute)
	wctx, err := rw.Write().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c, path, rw, ctx, wctx
}
