package curator_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Every documented case of the error vocabulary, provoked for real through
// the public API of every package: errors.Is finds the sentinel, and the
// message says where it came from (issue 15 item 2).
func TestErrorVocabulary(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := testenv.Client(t, testenv.Shared().ConnectString())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	path := func() string { return testenv.Path(t, "/vocabulary") }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mutex := func(cl *framework.Client, p string) *locks.Mutex {
		m, err := locks.NewMutex(cl, p)
		must(err)
		return m
	}

	type tc struct {
		name string
		err  error
		want []error
	}
	var cases []tc
	add := func(name string, err error, want ...error) { cases = append(cases, tc{name, err, want}) }
	invalid := curator.ErrInvalidArgument
	var nilCtx context.Context // passed on purpose

	// Bad input, refused before any I/O.
	_, err := framework.New("127.0.0.1:1", framework.WithSessionTimeout(0))
	add("framework.New, bad option", err, invalid)
	_, _, err = c.Get(nilCtx, "/x")
	add("Client.Get, nil context", err, invalid)
	_, _, err = c.Get(ctx, "relative")
	add("Client.Get, invalid path", err, curator.ErrInvalidPath, invalid)
	add("Client.Delete, an option of Create", c.Delete(ctx, "/x", framework.WithMode(framework.ModeEphemeral)), invalid)
	_, err = c.Set(ctx, "/x", nil, framework.WithGuarantee())
	add("Client.Set, an option of Delete", err, invalid)
	_, err = retry.NewExponentialBackoff(0, 3)
	add("retry.NewExponentialBackoff, zero base", err, invalid)
	_, err = locks.NewMutex(nil, "/x")
	add("locks.NewMutex, nil client", err, invalid)
	_, err = locks.NewMutex(c, "/")
	add("locks.NewMutex, /", err, curator.ErrInvalidPath, invalid)
	_, err = locks.NewMutex(c, "/x", locks.WithOnEnqueue(nil))
	add("locks.NewMutex, nil callback", err, invalid)
	_, err = locks.NewReadWriteLock(c, "/x", locks.WithSuspendPolicy(curator.SuspendPolicy(9)))
	add("locks.NewReadWriteLock, unknown policy", err, invalid)
	add("Mutex.Lock, nil context", mutex(c, path()).Lock(nilCtx), invalid)
	_, err = semaphore.New(c, "/x", 0)
	add("semaphore.New, no lease", err, invalid)
	_, err = multilock.New()
	add("multilock.New, no member", err, invalid)
	_, err = multilock.NewFromPaths(c, "/a", "/a")
	add("multilock.NewFromPaths, one path twice", err, invalid)
	_, err = barrier.NewDoubleBarrier(c, "/x", 0)
	add("barrier.NewDoubleBarrier, no member", err, invalid)
	_, err = barrier.NewBarrier(c, "x")
	add("barrier.NewBarrier, invalid path", err, curator.ErrInvalidPath, invalid)

	// A semaphore of one lease, held.
	sp := path()
	sem, err := semaphore.New(c, sp, 1)
	must(err)
	lease, err := sem.Acquire(ctx)
	must(err)
	_, err = sem.AcquireN(ctx, 2)
	add("Semaphore.AcquireN, more than the maximum", err, invalid)
	foreign, err := semaphore.New(c, path(), 1)
	must(err)
	add("Semaphore.Return, a lease of another", foreign.Return(ctx, lease), invalid)
	_, err = sem.TryAcquire(ctx)
	add("Semaphore.TryAcquire, none free", err, curator.ErrLocked)
	must(lease.Release(ctx))
	add("Lease.Release, twice", lease.Release(ctx), curator.ErrNotHeld)
	_, err = lease.FencingToken(ctx)
	add("Lease.FencingToken, returned", err, curator.ErrNotHeld)

	// A mutex held by another client.
	lp := path()
	holder := mutex(other, lp)
	must(holder.Lock(ctx))
	add("Mutex.TryLock, held by another", mutex(c, lp).TryLock(ctx), curator.ErrLocked)
	sm, err := semaphore.NewMutex(other, path())
	must(err)
	must(sm.Lock(ctx))
	sm2, err := semaphore.NewMutex(c, sm.Path())
	must(err)
	add("semaphore.Mutex.TryLock, held by another", sm2.TryLock(ctx), curator.ErrLocked)
	must(sm.Unlock(ctx))
	add("semaphore.Mutex.Unlock, not held", sm.Unlock(ctx), curator.ErrNotHeld)
	free := mutex(c, path())
	add("Mutex.Unlock, not held", free.Unlock(ctx), curator.ErrNotHeld)
	_, err = free.FencingToken(ctx)
	add("Mutex.FencingToken, not held", err, curator.ErrNotHeld)
	ml, err := multilock.New(free)
	must(err)
	add("MultiLock.Unlock, not held", ml.Unlock(ctx), curator.ErrNotHeld)

	// A waiter whose node someone deletes before it looks at the queue (in
	// its OnEnqueue): it vanished.
	vanishing, err := locks.NewMutex(c, lp, locks.WithOnEnqueue(func(n string) { must(other.Delete(ctx, n)) }))
	must(err)
	add("Mutex.Lock, our node deleted while waiting", vanishing.Lock(ctx), curator.ErrNodeVanished)
	must(holder.Unlock(ctx))

	// A holder whose node someone deletes: lost, told by Unlock.
	lost := mutex(c, path())
	must(lost.Lock(ctx))
	must(other.Delete(ctx, lost.Node()))
	add("Mutex.Unlock, node deleted while held", lost.Unlock(ctx), curator.ErrLockLost)

	// Upgrade.
	rw, err := locks.NewReadWriteLock(c, path())
	must(err)
	rctx, err := rw.Read().Acquire(ctx)
	must(err)
	add("WriteLock.Lock with the read lock's context", rw.Write().Lock(rctx), curator.ErrUpgrade)
	must(rw.Read().Unlock(ctx))

	// A double barrier entered twice, left without entering.
	db, err := barrier.NewDoubleBarrier(c, path(), 2)
	must(err)
	add("DoubleBarrier.Leave, not entered", db.Leave(ctx), curator.ErrNotHeld)
	entered := make(chan error, 1)
	ectx, cancelEnter := context.WithCancel(ctx)
	go func() { entered <- db.Enter(ectx) }()
	testenv.WaitFor(t, testenv.WaitShort, "the first Enter waiting", func() bool { return db.Node() != "" || len(testenv.Children(t, c, db.Path())) > 0 })
	add("DoubleBarrier.Enter, while entering", db.Enter(ctx), curator.ErrBusy)
	cancelEnter()
	if err := <-entered; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first Enter: %v", err)
	}

	// A session lost while waiting: the waiter says so.
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	weak := testenv.Client(t, px.Addr())
	bp := path()
	b, err := barrier.NewBarrier(c, bp)
	must(err)
	must(b.Set(ctx))
	wb, err := barrier.NewBarrier(weak, bp)
	must(err)
	waited := make(chan error, 1)
	go func() { waited <- wb.Wait(ctx) }()
	testenv.WaitFor(t, testenv.WaitShort, "the barrier waiter watching", func() bool { _, w := weak.WatchStats(); return w > 0 })
	must(zktest.ExpireSession(ctx, px, srv, weak.Session().ID()))
	add("Barrier.Wait, session lost", <-waited, curator.ErrSessionLost)
	must(b.Remove(ctx))

	// A closed client, a closed shared count.
	closing := testenv.Client(t, testenv.Shared().ConnectString())
	must(closing.Close())
	_, _, err = closing.Get(ctx, "/")
	add("Client.Get, closed client", err, curator.ErrClosed)
	sc, err := shared.NewCount(c, path(), 1)
	must(err)
	must(sc.Close())
	add("shared.Count.Start, after Close", sc.Start(ctx), curator.ErrClosed)

	for _, tc := range cases {
		if tc.err == nil {
			t.Errorf("%s: nil error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !errors.Is(tc.err, w) {
				t.Errorf("%s: %v, want it to wrap %q", tc.name, tc.err, w)
			}
		}
		if msg := tc.err.Error(); !strings.Contains(msg, ": ") {
			t.Errorf("%s: %q says nothing of where it came from", tc.name, msg)
		}
	}
}
