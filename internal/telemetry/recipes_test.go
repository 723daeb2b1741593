package telemetry_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/telemetry/telemetrytest"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var (
	recipe  = telemetry.KeyRecipe.String
	outcome = telemetry.KeyOutcome.String
	release = telemetry.KeyReleaseReason.String
	loss    = telemetry.KeyLossReason.String
)

const (
	acquireDur = telemetry.MetricAcquireDuration
	holdDur    = telemetry.MetricHoldDuration
	held       = telemetry.MetricHeld
	waiting    = telemetry.MetricWaiting
	losses     = telemetry.MetricLosses
)

func path(t testing.TB) string { return testenv.Path(t, "/telemetry") }

func client(t testing.TB, rig *telemetrytest.Rig, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.Client(t, connect, rig.Options(opts...)...)
}

func mutex(t testing.TB, c *framework.Client, path string, opts ...locks.Option) *locks.Mutex {
	t.Helper()
	m, err := locks.NewMutex(c, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// An acquisition that waits: it is counted as waiting while queued, timed
// from its call to its grant, then held; both holdings are timed when
// released. Its span is the parent of its ZooKeeper calls and tells of its
// node. No path without WithPathAttributes.
func TestMutexWaitsThenHolds(t *testing.T) {
	rig := telemetrytest.New(t)
	srv := testenv.Shared().ConnectString()
	ca, cb := client(t, rig, srv), client(t, rig, srv)
	p := path(t)
	ma, mb := mutex(t, ca, p), mutex(t, cb, p)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if err := ma.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitShort, 1, held, recipe("mutex"))
	errc := make(chan error, 1)
	go func() { errc <- mb.Lock(ctx) }()
	testenv.WaitFor(t, testenv.WaitShort, "the waiter to queue", func() bool { return len(testenv.Children(t, ca, p)) == 2 })
	rig.WaitSum(t, testenv.WaitShort, 1, waiting, recipe("mutex"))
	if err := ma.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, waiting, recipe("mutex")); n != 0 {
		t.Fatalf("waiting after the grant: %d", n)
	}
	if n := rig.Count(t, acquireDur, recipe("mutex"), outcome("acquired")); n != 2 {
		t.Fatalf("acquisitions: %d, want 2: %v", n, rig.Points(t, acquireDur))
	}
	if n := rig.Sum(t, held, recipe("mutex")); n != 1 {
		t.Fatalf("held: %d, want 1", n)
	}
	if err := mb.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, held, recipe("mutex")); n != 0 {
		t.Fatalf("held after both released: %d", n)
	}
	if n := rig.Count(t, holdDur, recipe("mutex"), release("released")); n != 2 {
		t.Fatalf("holdings timed: %d, want 2: %v", n, rig.Points(t, holdDur))
	}
	for _, name := range []string{acquireDur, holdDur, held, waiting} {
		if rig.HasKey(t, name, telemetry.KeyPath) {
			t.Fatalf("%s has curator.path without WithPathAttributes", name)
		}
	}
	// Both acquisitions are one point (same attributes), whose summed time
	// is positive.
	var sums []float64
	for _, pt := range rig.Points(t, acquireDur) {
		sums = append(sums, pt.Sum)
	}
	if len(sums) != 1 || sums[0] <= 0 {
		t.Fatalf("acquisition time %v", sums)
	}

	acq := rig.Ended(telemetry.SpanLockAcquire)
	if len(acq) != 2 {
		t.Fatalf("acquire spans: %s", telemetrytest.Names(rig.Ended("")))
	}
	for _, s := range acq {
		if s.SpanKind != trace.SpanKindInternal {
			t.Fatalf("acquire span kind %v", s.SpanKind)
		}
		if v, _ := telemetrytest.Attr(s, telemetry.KeyOutcome); v.AsString() != "acquired" {
			t.Fatalf("acquire span outcome %q", v.AsString())
		}
		kids := rig.ChildrenOf(s)
		if !slices.ContainsFunc(kids, func(k tracetest.SpanStub) bool { return k.Name == "create" && k.SpanKind == trace.SpanKindClient }) {
			t.Fatalf("the acquisition's create is not its child: children %s", telemetrytest.Names(kids))
		}
		if !slices.ContainsFunc(s.Events, func(e sdktrace.Event) bool { return e.Name == "enqueued" }) {
			t.Fatalf("no enqueued event on the acquire span: %v", s.Events)
		}
	}
	if n := len(rig.Ended(telemetry.SpanLockRelease)); n != 2 {
		t.Fatalf("release spans: %d, want 2", n)
	}
}

// A wait that times out, a Try that finds the lock held, and the path
// attribute when asked for.
func TestMutexTimeoutTryAndPath(t *testing.T) {
	rig := telemetrytest.New(t)
	srv := testenv.Shared().ConnectString()
	ca, cb := client(t, rig, srv, framework.WithPathAttributes()), client(t, rig, srv, framework.WithPathAttributes())
	p := path(t)
	ma, mb := mutex(t, ca, p), mutex(t, cb, p)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if err := ma.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := mb.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock past its deadline: %v", err)
	}
	if err := mb.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("TryLock of a held lock: %v", err)
	}
	at := telemetry.KeyPath.String(p)
	for _, o := range []string{"acquired", "timeout", "locked"} {
		if n := rig.Count(t, acquireDur, recipe("mutex"), outcome(o), at); n != 1 {
			t.Fatalf("%s acquisitions on %s: %d, want 1: %v", o, p, n, rig.Points(t, acquireDur))
		}
	}
	if n := rig.Sum(t, waiting, recipe("mutex")); n != 0 {
		t.Fatalf("waiting after the timeout: %d", n)
	}
	timedOut := 0
	for _, s := range rig.Ended(telemetry.SpanLockAcquire) {
		if v, _ := telemetrytest.Attr(s, telemetry.KeyPath); v.AsString() != p {
			t.Fatalf("acquire span's curator.path %q, want %q", v.AsString(), p)
		}
		if v, _ := telemetrytest.Attr(s, telemetry.KeyOutcome); v.AsString() == "timeout" {
			timedOut++
		}
	}
	if timedOut != 1 {
		t.Fatalf("%d timed-out acquire spans, want 1", timedOut)
	}
	if err := ma.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// The read and write halves are recipes of their own.
func TestReadWriteLock(t *testing.T) {
	rig := telemetrytest.New(t)
	c := client(t, rig, testenv.Shared().ConnectString())
	rw, err := locks.NewReadWriteLock(c, path(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Ctx(t, testenv.WaitLong)
	hctx, err := rw.Write().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Read().Lock(hctx); err != nil { // a downgrade
		t.Fatal(err)
	}
	if n := rig.Sum(t, held, recipe("write")) + rig.Sum(t, held, recipe("read")); n != 2 {
		t.Fatalf("held: %d, want 2: %v", n, rig.Points(t, held))
	}
	for _, l := range []curator.Locker{rw.Write(), rw.Read()} {
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"read", "write"} {
		if n := rig.Count(t, acquireDur, recipe(k), outcome("acquired")); n != 1 {
			t.Fatalf("%s acquisitions: %d, want 1", k, n)
		}
		if n := rig.Count(t, holdDur, recipe(k), release("released")); n != 1 {
			t.Fatalf("%s holdings: %d, want 1", k, n)
		}
	}
}

// Leases are holdings of the semaphore (AcquireN: one acquisition, n
// holdings); a semaphore mutex is a recipe of its own.
func TestSemaphoreLeases(t *testing.T) {
	rig := telemetrytest.New(t)
	c := client(t, rig, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	s, err := semaphore.New(c, path(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	leases, err := s.AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, held, recipe("semaphore")); n != 2 {
		t.Fatalf("leases held: %d, want 2", n)
	}
	if n := rig.Count(t, acquireDur, recipe("semaphore"), outcome("acquired")); n != 1 {
		t.Fatalf("semaphore acquisitions: %d, want 1", n)
	}
	if err := s.ReturnAll(ctx, leases); err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, held, recipe("semaphore")); n != 0 {
		t.Fatalf("leases held after ReturnAll: %d", n)
	}
	if n := rig.Count(t, holdDur, recipe("semaphore"), release("released")); n != 2 {
		t.Fatalf("leases timed: %d, want 2", n)
	}
	if n := len(rig.Ended(telemetry.SpanSemaphoreAcquire)); n != 1 {
		t.Fatalf("semaphore acquire spans: %d, want 1", n)
	}
	if n := len(rig.Ended(telemetry.SpanSemaphoreRelease)); n != 2 {
		t.Fatalf("semaphore release spans: %d, want 2", n)
	}

	m, err := semaphore.NewMutex(c, path(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, held, recipe("semaphore_mutex")); n != 1 {
		t.Fatalf("semaphore mutex held: %d, want 1", n)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rig.Count(t, holdDur, recipe("semaphore_mutex"), release("released")); n != 1 {
		t.Fatalf("semaphore mutex holdings: %d, want 1", n)
	}
	if n := rig.Count(t, acquireDur, recipe("semaphore")); n != 1 {
		t.Fatalf("the semaphore mutex counted as a semaphore lease too: %v", rig.Points(t, acquireDur))
	}
}

// A network cut suspends the connection: under LoseOnSuspend the lock is
// lost at once (reason suspended), held drops, the holding is timed as
// lost, and the release that follows counts nothing more.
func TestLossBySuspension(t *testing.T) {
	rig := telemetrytest.New(t)
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := client(t, rig, px.Addr())
	m := mutex(t, c, path(t))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	px.Blackhole()
	select {
	case <-m.Lost():
	case <-ctx.Done():
		t.Fatal("the lock was not lost when the connection was cut")
	}
	rig.WaitSum(t, testenv.WaitShort, 1, losses, recipe("mutex"), loss("suspended"))
	rig.WaitSum(t, testenv.WaitShort, 0, held, recipe("mutex"))
	rig.WaitCount(t, testenv.WaitShort, 1, holdDur, recipe("mutex"), release("lost"))
	rig.WaitSum(t, testenv.WaitShort, 1, telemetry.MetricTransitions, telemetry.KeySessionState.String("suspended"))
	px.Heal()
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("Unlock after the loss: %v, want ErrLockLost", err)
	}
	if n := rig.Count(t, holdDur, recipe("mutex")); n != 1 {
		t.Fatalf("holdings timed: %d, want 1 (the loss)", n)
	}
	if n := rig.Sum(t, losses); n != 1 {
		t.Fatalf("losses: %d, want 1: %v", n, rig.Points(t, losses))
	}
}

// The session expires under LoseOnLost: a loss by session, and one
// expiration (from the server or declared by the client, whichever comes
// first).
func TestLossBySessionExpiry(t *testing.T) {
	rig := telemetrytest.New(t)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := client(t, rig, px.Addr())
	m := mutex(t, c, path(t), locks.WithSuspendPolicy(curator.LoseOnLost))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.Lost():
	case <-ctx.Done():
		t.Fatal("the lock was not lost with its session")
	}
	rig.WaitSum(t, testenv.WaitShort, 1, losses, recipe("mutex"), loss("session_lost"))
	rig.WaitSum(t, testenv.WaitShort, 1, telemetry.MetricExpirations)
	rig.WaitSum(t, testenv.WaitShort, 0, held, recipe("mutex"))
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("Unlock after the loss: %v, want ErrLockLost", err)
	}
}

// A lock whose node someone deleted is found lost by its release.
func TestLossNodeDeleted(t *testing.T) {
	rig := telemetrytest.New(t)
	c := client(t, rig, testenv.Shared().ConnectString())
	m := mutex(t, c, path(t))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, m.Node()); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("Unlock of a deleted lock: %v, want ErrLockLost", err)
	}
	if n := rig.Sum(t, losses, recipe("mutex"), loss("node_deleted")); n != 1 {
		t.Fatalf("losses: %v", rig.Points(t, losses))
	}
	if n := rig.Count(t, holdDur, recipe("mutex"), release("lost")); n != 1 {
		t.Fatalf("holdings: %v", rig.Points(t, holdDur))
	}
	if n := rig.Sum(t, held); n != 0 {
		t.Fatalf("held: %d", n)
	}
}

// A MultiLock is one acquisition and one holding of its own, its members
// theirs; its span is the parent of its members'.
func TestMultiLock(t *testing.T) {
	rig := telemetrytest.New(t)
	c := client(t, rig, testenv.Shared().ConnectString())
	base := path(t)
	ml, err := multilock.NewFromPaths(c, base+"/a", base+"/b")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if err := ml.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, held, recipe("multi_lock")); n != 1 {
		t.Fatalf("multi-locks held: %d, want 1", n)
	}
	if n := rig.Sum(t, held, recipe("mutex")); n != 2 {
		t.Fatalf("members held: %d, want 2", n)
	}
	if err := ml.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, held); n != 0 {
		t.Fatalf("held after Unlock: %d", n)
	}
	if n := rig.Count(t, acquireDur, recipe("multi_lock"), outcome("acquired")); n != 1 {
		t.Fatalf("multi-lock acquisitions: %d", n)
	}
	if n := rig.Count(t, holdDur, recipe("multi_lock"), release("released")); n != 1 {
		t.Fatalf("multi-lock holdings: %d", n)
	}
	var outer tracetest.SpanStub
	for _, s := range rig.Ended(telemetry.SpanLockAcquire) {
		if v, _ := telemetrytest.Attr(s, telemetry.KeyRecipe); v.AsString() == "multi_lock" {
			outer = s
		}
	}
	kids := rig.ChildrenOf(outer)
	if n := len(slices.DeleteFunc(kids, func(k tracetest.SpanStub) bool { return k.Name != telemetry.SpanLockAcquire })); n != 2 {
		t.Fatalf("member acquisitions under the multi-lock's span: %d, want 2 (spans %s)", n, telemetrytest.Names(rig.Ended("")))
	}
	// A MultiLock of lockers of this module finds their client's providers.
	m2, err := multilock.New(mutex(t, c, base+"/c"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rig.Count(t, acquireDur, recipe("multi_lock")); n != 2 {
		t.Fatalf("multi-lock acquisitions: %d, want 2", n)
	}
}

// Leadership is a holding: Campaign is the acquisition, Resign the release;
// a Latch closed while leading ends its term as closed.
func TestLeader(t *testing.T) {
	rig := telemetrytest.New(t)
	c := client(t, rig, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	el, err := leader.NewElection(c, path(t), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer el.Close()
	if _, err := el.Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, held, recipe("election")); n != 1 {
		t.Fatalf("leading: %d, want 1", n)
	}
	if err := el.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rig.Count(t, acquireDur, recipe("election"), outcome("acquired")); n != 1 {
		t.Fatalf("campaigns: %v", rig.Points(t, acquireDur))
	}
	if n := rig.Count(t, holdDur, recipe("election"), release("released")); n != 1 {
		t.Fatalf("terms: %v", rig.Points(t, holdDur))
	}
	if n := len(rig.Ended(telemetry.SpanLeaderCampaign)); n != 1 {
		t.Fatalf("campaign spans: %d", n)
	}

	l, err := leader.NewLatch(c, path(t), "b")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := rig.Count(t, holdDur, recipe("latch"), release("closed")); n != 1 {
		t.Fatalf("latch terms: %v", rig.Points(t, holdDur))
	}
	if n := rig.Sum(t, held) + rig.Sum(t, waiting); n != 0 {
		t.Fatalf("held and waiting after Close: %d", n)
	}
}

// A leader's term lost by a network cut: reason suspended; the latch takes
// part again (a waiting acquisition) until closed.
func TestLeaderLoss(t *testing.T) {
	rig := telemetrytest.New(t)
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := client(t, rig, px.Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	l, err := leader.NewLatch(c, path(t), "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	lctx, err := l.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	px.Blackhole()
	select {
	case <-lctx.Done():
	case <-ctx.Done():
		t.Fatal("leadership not lost when the connection was cut")
	}
	rig.WaitSum(t, testenv.WaitShort, 1, losses, recipe("latch"), loss("suspended"))
	rig.WaitSum(t, testenv.WaitShort, 0, held, recipe("latch"))
	rig.WaitSum(t, testenv.WaitShort, 1, waiting, recipe("latch")) // taking part again
	px.Heal()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitShort, 0, waiting, recipe("latch"))
}
