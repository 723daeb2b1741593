package locks_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// The holder's session expires: the holder is told (Lost closes), another
// process acquires, and the fencing token keeps increasing (Curator's
// testKilledSession, with the loss reported).
func TestMutexHolderSessionExpires(t *testing.T) {
	srv := zktest.StartServer(t)
	px := zktest.StartProxy(t, srv.ConnectString())
	ca := testenv.Client(t, px.Addr())
	cb := testenv.Client(t, srv.ConnectString())
	path := lockPath(t)
	ma, mb := newMutex(t, ca, path), newMutex(t, cb, path)
	ctx := testenv.Ctx(t, time.Minute)
	if err := ma.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	tokA, err := ma.FencingToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- mb.Lock(ctx) }()
	testenv.WaitFor(t, testenv.WaitShort, "the waiter to queue", func() bool { return len(testenv.Children(t, cb, path)) == 2 })
	if err := zktest.ExpireSession(ctx, px, srv, ca.Session().ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ma.Lost():
	case <-ctx.Done():
		t.Fatal("the holder was never told it lost the lock")
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	tokB, err := mb.FencingToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tokB <= tokA {
		t.Fatalf("fencing token %d after %d", tokB, tokA)
	}
	if err := ma.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("unlock after loss: %v, want ErrLockLost", err)
	}
	if ma.IsAcquiredInThisProcess() {
		t.Fatal("still held after unlocking a lost lock")
	}
	if err := mb.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// The context Do hands out is cancelled when the lock is lost, and Do
// reports the loss.
func TestMutexDoCancelledOnLoss(t *testing.T) {
	srv := zktest.StartServer(t)
	px := zktest.StartProxy(t, srv.ConnectString())
	c := testenv.Client(t, px.Addr())
	m := newMutex(t, c, lockPath(t))
	ctx := testenv.Ctx(t, time.Minute)
	inside := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- m.Do(ctx, func(hctx context.Context) error {
			close(inside)
			<-hctx.Done()
			if !errors.Is(context.Cause(hctx), curator.ErrLockLost) {
				t.Errorf("cause %v", context.Cause(hctx))
			}
			return nil
		})
	}()
	<-inside
	px.Blackhole()
	err := <-errc
	px.Heal()
	if !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("Do: %v, want ErrLockLost", err)
	}
}

// Suspend policies: with LoseOnLost a server restart (session kept) does not
// lose the lock; with the default LoseOnSuspend it does, and the node is
// deleted once the connection is back.
func TestMutexSuspendPolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policy   curator.SuspendPolicy
		wantLost bool
	}{
		{"LoseOnLost", curator.LoseOnLost, false},
		{"LoseOnSuspend", curator.LoseOnSuspend, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := zktest.StartServer(t)
			c := testenv.Client(t, srv.ConnectString(), framework.WithSessionTimeout(8*time.Second))
			states := make(chan framework.State, 64)
			c.AddListener(func(s framework.State) {
				select { // never block the client's listener
				case states <- s:
				default:
				}
			})
			path := lockPath(t)
			m := newMutex(t, c, path, locks.WithSuspendPolicy(tc.policy))
			ctx := testenv.Ctx(t, time.Minute)
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			sid := c.Session().ID()
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			for {
				s := testenv.Recv(t, states, testenv.WaitLong, "reconnected after the restart")
				if s == framework.StateReconnected {
					break
				}
				if s == framework.StateLost {
					t.Fatal("session lost across a quick restart")
				}
			}
			if c.Session().ID() != sid {
				t.Fatal("new session")
			}
			if tc.wantLost {
				select {
				case <-m.Lost():
				case <-ctx.Done():
					t.Fatal("not told of the suspension")
				}
				testenv.WaitFor(t, 20*time.Second, "the lost lock's node to be deleted", func() bool { return len(testenv.Children(t, c, path)) == 0 })
			} else {
				select {
				case <-m.Lost():
					t.Fatal("lost although the session survived")
				default:
				}
				if len(testenv.Children(t, c, path)) != 1 {
					t.Fatal("lock node gone")
				}
			}
			if err := m.Unlock(ctx); (err != nil) != tc.wantLost || (err != nil && !errors.Is(err, curator.ErrLockLost)) {
				t.Fatalf("unlock: %v", err)
			}
		})
	}
}

// errTestOver ends the context of a test's workers when the test ends
// early (it failed): they stop without a word of their own.
var errTestOver = errors.New("the test is over")

// workers starts one worker per mutex, on a context that a clean-up
// (registered now: call it once the clients are made) ends, waiting for
// them, should the test end before they do: they stop before their
// clients close and before the test is over. It returns the wait for them.
func workers(t *testing.T, ctx context.Context, fence *zktest.Fence, n int, ms ...*locks.Mutex) (wait func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() { defer wg.Done(); worker(ctx, t, m, fence, n) }()
	}
	t.Cleanup(func() { cancel(errTestOver); wg.Wait() })
	return wg.Wait
}

// worker acquires n times, entering the fencing-checked resource each time;
// errors from faults are retried as a user would.
func worker(ctx context.Context, t *testing.T, m *locks.Mutex, fence *zktest.Fence, n int) {
	for done := 0; done < n; {
		hctx, err := m.Acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				if !errors.Is(context.Cause(ctx), errTestOver) {
					t.Errorf("worker gave up after %d: %v", done, err)
				}
				return
			}
			continue // a fault: try again
		}
		if tok, err := m.FencingToken(hctx); err == nil {
			if exit, ok := fence.Enter(m.Node(), tok, m.Lost()); ok {
				time.Sleep(time.Millisecond)
				exit()
				done++
			}
		}
		// The release rule: nil, or a loss; nothing else under any fault.
		if err := m.Unlock(ctx); err != nil && !errors.Is(err, curator.ErrLockLost) {
			t.Errorf("unlock: %v, want nil or ErrLockLost", err)
		}
	}
}

func checkFence(t *testing.T, fence *zktest.Fence) {
	t.Helper()
	for _, v := range fence.Violations() {
		t.Error(v)
	}
	t.Logf("entries %d, stale tokens rejected %d", fence.Entries(), fence.Stale())
}

// Curator's testWaitingProcessKilledServer, grown: the server restarts while
// clients hold and wait; all eventually acquire, never two at once.
func TestMutexServerRestart(t *testing.T) {
	srv := zktest.StartServer(t)
	path := lockPath(t)
	ctx := testenv.Ctx(t, 2*time.Minute)
	fence := zktest.NewFence()
	var ms []*locks.Mutex
	for i := 0; i < 4; i++ {
		ms = append(ms, newMutex(t, testenv.Client(t, srv.ConnectString(), framework.WithSessionTimeout(6*time.Second)), path))
	}
	wait := workers(t, ctx, fence, 15, ms...)
	testenv.WaitFor(t, 30*time.Second, "work before the fault", func() bool { return fence.Entries() >= 10 })
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	wait()
	checkFence(t, fence)
}

// A 3-node ensemble loses its leader mid-run: everyone finishes, and the
// resource never sees two holders that were not told of a loss.
func TestMutexLeaderLoss(t *testing.T) {
	cl := zktest.StartCluster(t, 3)
	path := lockPath(t)
	ctx := testenv.Ctx(t, 3*time.Minute)
	fence := zktest.NewFence()
	var ms []*locks.Mutex
	for i := 0; i < 5; i++ {
		ms = append(ms, newMutex(t, testenv.Client(t, cl.ConnectString(), framework.WithSessionTimeout(6*time.Second)), path))
	}
	wait := workers(t, ctx, fence, 12, ms...)
	testenv.WaitFor(t, time.Minute, "work before the fault", func() bool { return fence.Entries() >= 15 })
	leader, err := cl.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Members()[leader].Stop(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, time.Minute, "work after the fault", func() bool { return fence.Entries() >= 30 })
	if err := cl.Members()[leader].Start(); err != nil {
		t.Fatal(err)
	}
	wait()
	checkFence(t, fence)
}
