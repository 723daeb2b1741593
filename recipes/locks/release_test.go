package locks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator"
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
