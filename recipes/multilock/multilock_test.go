package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

var shared *zktest.Server

func TestMain(m *testing.M) {
	srv, err := zktest.NewServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "multilock tests need ZooKeeper:", err)
		os.Exit(1)
	}
	shared = srv
	code := m.Run()
	srv.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func newClient(t testing.TB, connect string) *framework.Client {
	t.Helper()
	c, err := framework.New(connect, framework.WithSessionTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

var seq atomic.Int64

func paths(t testing.TB, n int) []string {
	base := fmt.Sprintf("/mltest/%s-%d", t.Name(), seq.Add(1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/lock-%d", base, i)
	}
	return out
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func nodes(t testing.TB, c *framework.Client, path string) int {
	kids, _, err := c.Children(ctxFor(t, 10*time.Second), path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	return len(kids)
}

func mutex(t testing.TB, c *framework.Client, p string) *locks.Mutex {
	m, err := locks.NewMutex(c, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// failing wraps a lock whose Lock or Unlock fails on demand.
type failing struct {
	locks.Locker
	lockErr, unlockErr error
}

func (f *failing) Lock(ctx context.Context) error {
	if f.lockErr != nil {
		return f.lockErr
	}
	return f.Locker.Lock(ctx)
}

func (f *failing) Unlock(ctx context.Context) error {
	if f.unlockErr != nil {
		return f.unlockErr
	}
	return f.Locker.Unlock(ctx)
}

var errBoom = errors.New("boom")

// Curator's testSomeReleasesFail: the failure is returned, the other member
// is still released.
func TestMultiLockSomeReleasesFail(t *testing.T) {
	c := newClient(t, shared.ConnectString())
	ps := paths(t, 2)
	m1, m2 := mutex(t, c, ps[0]), mutex(t, c, ps[1])
	ml, err := multilock.New(m1, &failing{Locker: m2, unlockErr: errBoom})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t, time.Minute)
	if err := ml.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	err = ml.Unlock(ctx)
	var me *multilock.MemberError
	if !errors.Is(err, errBoom) || !errors.As(err, &me) || me.Index != 1 {
		t.Fatalf("unlock: %v", err)
	}
	if m1.IsAcquiredInThisProcess() || !m2.IsAcquiredInThisProcess() {
		t.Fatal("member 0 must be released, member 1 (whose release failed) still held")
	}
	m2.Unlock(ctx)
}

// Curator's testSomeLocksFailToLock: the member taken before is released.
func TestMultiLockSomeLocksFailToLock(t *testing.T) {
	c := newClient(t, shared.ConnectString())
	ps := paths(t, 2)
	m1 := mutex(t, c, ps[0])
	ml, _ := multilock.New(m1, &failing{Locker: mutex(t, c, ps[1]), lockErr: errBoom})
	err := ml.Lock(ctxFor(t, time.Minute))
	var me *multilock.MemberError
	if !errors.Is(err, errBoom) || !errors.As(err, &me) || me.Index != 1 {
		t.Fatalf("lock: %v", err)
	}
	if m1.IsAcquiredInThisProcess() || nodes(t, c, ps[0]) != 0 {
		t.Fatal("member 0 left held")
	}
}

// A partial acquisition is rolled back when the deadline passes: nothing of
// ours stays on the server.
func TestMultiLockRollbackOnTimeout(t *testing.T) {
	c := newClient(t, shared.ConnectString())
	other := newClient(t, shared.ConnectString())
	ps := paths(t, 3)
	ctx := ctxFor(t, time.Minute)
	blocker := mutex(t, other, ps[2])
	if err := blocker.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	ml, err := multilock.NewFromPaths(c, ps...)
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	err = ml.Lock(tctx)
	var me *multilock.MemberError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &me) || me.Index != 2 || me.Path != ps[2] {
		t.Fatalf("lock: %v", err)
	}
	if nodes(t, c, ps[0]) != 0 || nodes(t, c, ps[1]) != 0 || nodes(t, c, ps[2]) != 1 {
		t.Fatal("partial acquisition left nodes behind")
	}
	if ml.IsAcquiredInThisProcess() {
		t.Fatal("held")
	}
	if err := ml.Unlock(ctx); !errors.Is(err, locks.ErrNotHeld) {
		t.Fatalf("unlock not held: %v", err)
	}
	blocker.Unlock(ctx)
}

// A member's session expires while held: Lost closes, and Unlock returns
// that member's error while still releasing the others.
func TestMultiLockMemberSessionExpires(t *testing.T) {
	srv := zktest.StartServer(t)
	px := zktest.StartProxy(t, srv.ConnectString())
	weak := newClient(t, px.Addr())
	strong := newClient(t, srv.ConnectString())
	ps := paths(t, 2)
	m0, m1 := mutex(t, strong, ps[0]), mutex(t, weak, ps[1])
	ml, _ := multilock.New(m0, m1)
	ctx := ctxFor(t, time.Minute)
	if err := ml.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, px, srv, weak.Session().ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ml.Lost():
	case <-ctx.Done():
		t.Fatal("multi-lock not lost with a member")
	}
	err := ml.Unlock(ctx)
	var me *multilock.MemberError
	if !errors.Is(err, locks.ErrLockLost) || !errors.As(err, &me) || me.Index != 1 {
		t.Fatalf("unlock: %v", err)
	}
	if m0.IsAcquiredInThisProcess() || nodes(t, strong, ps[0]) != 0 {
		t.Fatal("the healthy member was not released")
	}
}

// Mixed member kinds: a mutex, a write lock and a semaphore mutex.
func TestMultiLockMixedKinds(t *testing.T) {
	c := newClient(t, shared.ConnectString())
	ps := paths(t, 3)
	rw, err := locks.NewReadWriteLock(c, ps[1])
	if err != nil {
		t.Fatal(err)
	}
	sm, err := semaphore.NewMutex(c, ps[2])
	if err != nil {
		t.Fatal(err)
	}
	ml, _ := multilock.New(mutex(t, c, ps[0]), rw.Write(), sm)
	ctx := ctxFor(t, time.Minute)
	if err := ml.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if !ml.IsAcquiredInThisProcess() {
		t.Fatal("not all held")
	}
	other := newClient(t, shared.ConnectString())
	orw, _ := locks.NewReadWriteLock(other, ps[1])
	osm, _ := semaphore.NewMutex(other, ps[2])
	for i, l := range []interface{ TryLock(context.Context) error }{mutex(t, other, ps[0]), orw.Read(), osm} {
		if err := l.TryLock(ctx); !errors.Is(err, locks.ErrLocked) {
			t.Errorf("member %d taken by another client: %v", i, err)
		}
	}
	if err := ml.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{ps[0], ps[1], ps[2] + "/leases"} {
		if n := nodes(t, c, p); n != 0 {
			t.Errorf("member %d left %d nodes", i, n)
		}
	}
}

// 10 clients over overlapping sets, always in the same (sorted) order: no
// member ever has two holders, and all finish: no deadlock.
func TestMultiLockOverlappingSets(t *testing.T) {
	ps := paths(t, 4)
	ctx := ctxFor(t, 2*time.Minute)
	holders := make([]atomic.Int32, len(ps))
	var wg sync.WaitGroup
	var total atomic.Int32
	for i := 0; i < 10; i++ {
		c := newClient(t, shared.ConnectString())
		set := []int{i % 4, (i + 1) % 4, (i + 2) % 4}[:2+i%2]
		slices.Sort(set)
		var members []locks.Locker
		for _, j := range set {
			members = append(members, mutex(t, c, ps[j]))
		}
		ml, _ := multilock.New(members...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 8; r++ {
				if err := ml.Lock(ctx); err != nil {
					t.Error(err)
					return
				}
				for _, j := range set {
					if holders[j].Add(1) != 1 {
						t.Errorf("lock %d has two holders", j)
					}
				}
				for _, j := range set {
					holders[j].Add(-1)
				}
				if err := ml.Unlock(ctx); err != nil {
					t.Error(err)
				}
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	if total.Load() != 80 {
		t.Fatalf("%d acquisitions of 80", total.Load())
	}
}

// Opposite orders can deadlock; the deadline ends it and nothing stays held.
func TestMultiLockOppositeOrders(t *testing.T) {
	ps := paths(t, 2)
	c1, c2 := newClient(t, shared.ConnectString()), newClient(t, shared.ConnectString())
	ab, _ := multilock.New(mutex(t, c1, ps[0]), mutex(t, c1, ps[1]))
	ba, _ := multilock.New(mutex(t, c2, ps[1]), mutex(t, c2, ps[0]))
	ctx := ctxFor(t, time.Minute)
	var wg sync.WaitGroup
	for _, ml := range []*multilock.MultiLock{ab, ba} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 10; r++ {
				tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				err := ml.Lock(tctx)
				cancel()
				if err == nil {
					ml.Unlock(ctx)
				} else if !errors.Is(err, context.DeadlineExceeded) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range ps {
		if n := nodes(t, c1, p); n != 0 {
			t.Errorf("%s: %d nodes left", p, n)
		}
	}
}

func TestMultiLockBadInput(t *testing.T) {
	c := newClient(t, shared.ConnectString())
	if _, err := multilock.New(); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Error(err)
	}
	if _, err := multilock.New(mutex(t, c, "/x"), nil); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Error(err)
	}
	if _, err := multilock.NewFromPaths(c); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Error(err)
	}
	if _, err := multilock.NewFromPaths(c, "/ok", "bad"); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Error(err)
	}
	if _, err := multilock.NewFromPaths(nil, "/ok"); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Error(err)
	}
	ml, _ := multilock.NewFromPaths(c, "/x")
	//lint:ignore SA1012 testing nil
	if err := ml.Lock(nil); !errors.Is(err, multilock.ErrInvalidArgument) { //nolint:staticcheck
		t.Error(err)
	}
	select {
	case <-ml.Lost():
	default:
		t.Error("Lost of an unheld multi-lock must be closed")
	}
}
