package locks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// An operator deletes the holder's node: Unlock (and Do) must say the lock
// was lost, close Lost and end the held context, under every policy (issue
// 14 item 4). Before, the delete ignored the missing node and Unlock
// returned nil.
func TestUnlockFindsNodeDeleted(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	op := testenv.Client(t, testenv.Shared().ConnectString())
	for _, pc := range testenv.Policies {
		t.Run(pc.Name, func(t *testing.T) {
			ctx := testenv.Ctx(t, time.Minute)
			m := newMutex(t, c, lockPath(t), locks.WithSuspendPolicy(pc.Policy))
			hctx, err := m.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lost := m.Lost()
			if err := op.Delete(ctx, m.Node()); err != nil {
				t.Fatal(err)
			}
			if err := m.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
				t.Fatalf("unlock of a deleted node: %v, want ErrLockLost", err)
			}
			if !testenv.IsClosed(lost) {
				t.Fatal("Lost not closed after a release found the node gone")
			}
			if hctx.Err() == nil {
				t.Fatal("held context not ended")
			}
			if m.IsAcquiredInThisProcess() {
				t.Fatal("still held")
			}
			err = m.Do(ctx, func(context.Context) error { return op.Delete(ctx, m.Node()) })
			if !errors.Is(err, curator.ErrLockLost) {
				t.Fatalf("Do whose node was deleted: %v, want ErrLockLost", err)
			}
			if err := m.Lock(ctx); err != nil { // usable again
				t.Fatal(err)
			}
			if err := m.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The holder's session expires on the server before the client notices;
// the Unlock that started in the old session deletes in the new one and
// finds the node gone: it must say the lock was lost (issue 14 item 4).
// Before, it returned nil under LoseOnLost.
func TestUnlockAfterUnnoticedExpiry(t *testing.T) {
	srv := zktest.StartServer(t)
	for _, pc := range testenv.Policies {
		t.Run(pc.Name, func(t *testing.T) {
			px := zktest.StartProxy(t, srv.ConnectString())
			c := testenv.Client(t, px.Addr())
			ctx := testenv.Ctx(t, time.Minute)
			m := newMutex(t, c, lockPath(t), locks.WithSuspendPolicy(pc.Policy))
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			lost := m.Lost()
			id := c.Session().ID()
			px.Blackhole() // the client hears nothing: it does not know yet
			if testenv.IsClosed(lost) {
				t.Fatal("lost before the partition")
			}
			errc := make(chan error, 1)
			go func() { errc <- m.Unlock(ctx) }()
			if err := zktest.ExpireSession(ctx, px, srv, id); err != nil {
				t.Fatal(err)
			}
			px.Heal()
			if err := <-errc; !errors.Is(err, curator.ErrLockLost) {
				t.Fatalf("unlock across an unnoticed expiry: %v, want ErrLockLost", err)
			}
			if !testenv.IsClosed(lost) {
				t.Fatal("Lost not closed")
			}
		})
	}
}

// The release rule (package curator, "Releasing"): an Unlock whose delete
// cannot be confirmed now (the connection is cut) releases the lock and
// returns nil, for the delete is guaranteed to finish in the background:
// the node is gone once the connection is back, and a waiter gets the lock.
func TestUnlockWithDeletePendingSucceeds(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	// LoseOnLost: the cut alone does not lose the lock, so the release is a
	// plain one whose delete hangs.
	c := testenv.Client(t, px.Addr(), framework.WithSessionTimeout(20*time.Second))
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := lockPath(t)
	m := newMutex(t, c, path, locks.WithSuspendPolicy(curator.LoseOnLost))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := m.Node()
	px.Blackhole()
	short, cancel := context.WithTimeout(ctx, time.Second)
	err := m.Unlock(short)
	cancel()
	if err != nil {
		t.Fatalf("Unlock with its delete pending: %v, want nil", err)
	}
	if m.IsAcquiredInThisProcess() {
		t.Fatal("still held after Unlock")
	}
	if ok, _, err := other.Exists(ctx, node); err != nil || !ok {
		t.Fatalf("the node is gone already (%v, %v): the delete was not pending", ok, err)
	}
	waiter := newMutex(t, other, path)
	got := make(chan error, 1)
	go func() { got <- waiter.Lock(ctx) }()
	px.Heal()
	if err := <-got; err != nil {
		t.Fatalf("a waiter once the pending delete ran: %v", err)
	}
	if err := c.WaitBackground(ctx); err != nil {
		t.Fatalf("the background delete: %v", err)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
