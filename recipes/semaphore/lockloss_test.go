package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

// acquireAsync starts s.Acquire(ctx); its outcome comes on the channel.
func acquireAsync(ctx context.Context, s *semaphore.Semaphore) <-chan specResult {
	ch := make(chan specResult, 1)
	go func() {
		l, err := s.Acquire(ctx)
		ch <- specResult{l, err}
	}()
	return ch
}

// lockNodesOf returns the internal-lock nodes of path owned by session id.
func lockNodesOf(t *testing.T, c *framework.Client, path string, id int64) []string {
	t.Helper()
	var mine []string
	for _, k := range testenv.Children(t, c, path+"/locks") {
		ok, st, err := c.Exists(testenv.Ctx(t, testenv.WaitShort), path+"/locks/"+k)
		if err != nil {
			t.Fatal(err)
		}
		if ok && st.EphemeralOwner == id {
			mine = append(mine, k)
		}
	}
	return mine
}

// Issue 38 item 3: an operator deletes the internal-lock node of an
// acquirer that holds the internal lock and waits for the one lease. The
// next acquirer takes the internal lock and waits too; before the fix the
// first never noticed, so once the lease was returned the two waiting
// lease nodes kept the count at 2 (max 1) and neither was ever granted.
// The holding of the internal lock watches its node: the first acquirer
// deletes its lease node and starts over, and both are granted in turn.
func TestSemaphoreInternalLockNodeDeletedNoStall(t *testing.T) {
	srv := testenv.Shared().ConnectString()
	ca, cb, cc, admin := testenv.Client(t, srv), testenv.Client(t, srv), testenv.Client(t, srv), testenv.Client(t, srv)
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	path := semPath(t)
	a, err := newSem(t, ca, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	enqueued := make(chan string, 8)
	b := acquireAsync(ctx, newSem(t, cb, path, 1, semaphore.WithOnEnqueue(func(n string) { enqueued <- n })))
	bLease := testenv.Recv(t, enqueued, testenv.WaitShort, "B's lease node (B holds the internal lock)")
	var bLock []string
	testenv.WaitFor(t, testenv.WaitShort, "B's internal-lock node", func() bool {
		bLock = lockNodesOf(t, admin, path, cb.Session().ID())
		return len(bLock) == 1
	})
	if err := admin.Delete(ctx, path+"/locks/"+bLock[0]); err != nil { // the operator
		t.Fatal(err)
	}
	c := acquireAsync(ctx, newSem(t, cc, path, 1))
	testenv.WaitFor(t, testenv.WaitShort, "C in the internal lock", func() bool {
		return len(lockNodesOf(t, admin, path, cc.Session().ID())) == 1
	})
	// B noticed, with no lease change to wake it: it gave up its lease node.
	testenv.WaitFor(t, testenv.WaitShort, "B's first lease node deleted", func() bool {
		ok, _, err := admin.Exists(ctx, bLease)
		return err == nil && !ok
	})
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	var first specResult
	var firstName string
	var secondCh <-chan specResult
	select {
	case first = <-b:
		firstName, secondCh = "B", c
	case first = <-c:
		firstName, secondCh = "C", b
	case <-time.After(testenv.WaitLong):
		t.Fatal("stalled: neither B nor C granted the returned lease")
	}
	if first.err != nil {
		t.Fatalf("%s: %v", firstName, first.err)
	}
	t.Logf("%s granted first", firstName)
	testenv.NotYet(t, secondCh, "the other acquirer, while "+firstName+" holds the one lease")
	if err := first.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	second := testenv.Recv(t, secondCh, testenv.WaitLong, "the other acquirer once "+firstName+" released")
	if second.err != nil {
		t.Fatal(second.err)
	}
	if n := len(leaseNodes(t, admin, path)); n != 1 {
		t.Fatalf("%d lease nodes with one lease held, want 1", n)
	}
	if err := second.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "no lease or lock node left", func() bool {
		return len(leaseNodes(t, admin, path)) == 0 && len(testenv.Children(t, admin, path+"/locks")) == 0
	})
}

// Issue 38 item 5: a semaphore-mutex waiter that holds the internal lock
// and waits for the lease, whose session expires, gets the wait's own
// error (its node vanished with the session: ErrNodeVanished wrapping
// ErrSessionLost, as a locks.Mutex waiter does), not ErrLockLost, which
// is for something that was held. Before the fix the internal lock's loss
// won: ErrLockLost.
func TestSemaphoreMutexWaiterSessionExpires(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	cw := testenv.Client(t, px.Addr())
	ch := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	path := semPath(t)
	holder, err := semaphore.NewMutex(ch, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	enqueued := make(chan string, 4)
	waiter, err := semaphore.NewMutex(cw, path, semaphore.WithOnEnqueue(func(n string) { enqueued <- n }))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- waiter.Lock(ctx) }()
	testenv.Recv(t, enqueued, testenv.WaitShort, "the waiter's lease node (it holds the internal lock)")
	if err := zktest.ExpireSession(ctx, px, testenv.Shared(), cw.Session().ID()); err != nil {
		t.Fatal(err)
	}
	err = testenv.Recv(t, errc, testenv.WaitLong, "the waiter's Lock to fail")
	if errors.Is(err, curator.ErrLockLost) || !errors.Is(err, curator.ErrNodeVanished) || !errors.Is(err, curator.ErrSessionLost) {
		t.Fatalf("waiter whose session expired: %v; want ErrNodeVanished wrapping ErrSessionLost, not ErrLockLost", err)
	}
	if waiter.IsAcquiredInThisProcess() {
		t.Fatal("the failed waiter holds")
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Issue 38 item 5: Acquire never returns a lease already known lost. The
// connection drops during the internal lock's release, right after the
// grant (the delete done on the server, its reply never delivered):
// under LoseOnSuspend the new lease is lost before Acquire returns.
// Before the fix Acquire returned it, Lost closed; now it acquires again.
func TestAcquireNeverReturnsALostLease(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	obs := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	path := semPath(t)
	made := make(chan string, 8)
	s := newSem(t, c, path, 1, semaphore.WithSuspendPolicy(curator.LoseOnSuspend),
		semaphore.WithOnEnqueue(func(n string) { made <- n }))
	release := px.HoldReply(zktest.OpDelete) // the first delete: the internal lock's, after the grant
	got := acquireAsync(ctx, s)
	if err := release.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	release.Drop() // a connection loss; the session lives on
	r := testenv.Recv(t, got, testenv.WaitLong, "Acquire")
	if r.err != nil {
		t.Fatalf("Acquire: %v; want a lease acquired again", r.err)
	}
	if testenv.IsClosed(r.l.Lost()) {
		t.Fatalf("Acquire returned lease %s already lost: %v", r.l.Node(), context.Cause(r.l.Context()))
	}
	if first := testenv.Recv(t, made, testenv.WaitShort, "the first lease node"); first == r.l.Node() {
		t.Fatalf("granted %s, the lease lost at its grant; want a new one", first)
	}
	testenv.Eventually(t, testenv.WaitShort, "only the granted lease node", func() error {
		if ls := leaseNodes(t, obs, path); len(ls) != 1 || path+"/leases/"+ls[0] != r.l.Node() {
			return fmt.Errorf("lease nodes %v, want only %s", ls, r.l.Node())
		}
		return nil
	})
	if err := r.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
