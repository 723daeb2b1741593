package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

// An operator deletes a lease's node: Release (and the semaphore mutex's
// Unlock) must say the lease was lost and close Lost, under every policy
// (issue 14 item 4). Before, Release returned nil.
func TestLeaseReleaseFindsNodeDeleted(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	op := testenv.Client(t, testenv.Shared().ConnectString())
	for _, pc := range testenv.Policies {
		t.Run(pc.Name, func(t *testing.T) {
			ctx := testenv.Ctx(t, time.Minute)
			path := semPath(t)
			l, err := newSem(t, c, path, 2, semaphore.WithSuspendPolicy(pc.Policy)).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lost := l.Lost()
			if err := op.Delete(ctx, l.Node()); err != nil {
				t.Fatal(err)
			}
			if err := l.Release(ctx); !errors.Is(err, curator.ErrLockLost) {
				t.Fatalf("release of a deleted lease: %v, want ErrLockLost", err)
			}
			if !testenv.IsClosed(lost) {
				t.Fatal("Lost not closed after a release found the node gone")
			}
			m, err := semaphore.NewMutex(c, path+"-mutex", semaphore.WithSuspendPolicy(pc.Policy))
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			lost = m.Lost()
			if err := op.Delete(ctx, m.Node()); err != nil {
				t.Fatal(err)
			}
			if err := m.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
				t.Fatalf("unlock of a deleted semaphore mutex: %v, want ErrLockLost", err)
			}
			if !testenv.IsClosed(lost) {
				t.Fatal("mutex Lost not closed")
			}
		})
	}
}

// A lease holder's session expires on the server before the client
// notices; the Release started in the old session finds the node gone in
// the new one: it must say the lease was lost (issue 14 item 4).
func TestLeaseReleaseAfterUnnoticedExpiry(t *testing.T) {
	srv := zktest.StartServer(t)
	for _, pc := range testenv.Policies {
		t.Run(pc.Name, func(t *testing.T) {
			px := zktest.StartProxy(t, srv.ConnectString())
			c := testenv.Client(t, px.Addr())
			ctx := testenv.Ctx(t, time.Minute)
			l, err := newSem(t, c, semPath(t), 1, semaphore.WithSuspendPolicy(pc.Policy)).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			id := c.Session().ID()
			px.Blackhole() // the client hears nothing: it does not know yet
			if testenv.IsClosed(l.Lost()) {
				t.Fatal("lost before the partition")
			}
			errc := make(chan error, 1)
			go func() { errc <- l.Release(ctx) }()
			if err := zktest.ExpireSession(ctx, px, srv, id); err != nil {
				t.Fatal(err)
			}
			px.Heal()
			if err := <-errc; !errors.Is(err, curator.ErrLockLost) {
				t.Fatalf("release across an unnoticed expiry: %v, want ErrLockLost", err)
			}
			if !testenv.IsClosed(l.Lost()) {
				t.Fatal("Lost not closed")
			}
		})
	}
}

// Leases are holdings like locks.Mutex's (issue 14 item 8): a fencing
// token that increases from lease to lease, guarded writes that fail once
// the lease is gone, and a held context cancelled with cause ErrLockLost
// when the lease is lost; the semaphore mutex gives the same.
func TestLeaseIsAHolding(t *testing.T) {
	srv := zktest.StartServer(t)
	px := zktest.StartProxy(t, srv.ConnectString())
	c := testenv.Client(t, px.Addr())
	op := testenv.Client(t, srv.ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	path := semPath(t)
	s := newSem(t, c, path, 2)
	var last int64
	for i := 0; i < 3; i++ {
		l, err := s.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := l.FencingToken(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tok <= last {
			t.Fatalf("fencing token %d after %d", tok, last)
		}
		last = tok
		if _, err := l.GuardedMulti(ctx, framework.CreateOp{Path: path + "-guarded", Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		if err := op.Delete(ctx, path+"-guarded"); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if l.Context().Err() == nil {
			t.Fatal("held context not ended by Release")
		}
		if _, err := l.FencingToken(ctx); !errors.Is(err, curator.ErrNotHeld) {
			t.Fatalf("token after release: %v", err)
		}
	}

	// A guarded write after the node is gone writes nothing.
	l, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Delete(ctx, l.Node()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.GuardedMulti(ctx, framework.CreateOp{Path: path + "-guarded"}); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("guarded write without the lease: %v, want ErrLockLost", err)
	}
	if ok, _, err := op.Exists(ctx, path+"-guarded"); err != nil || ok {
		t.Fatalf("guarded write happened: %v %v", ok, err)
	}
	if err := l.Release(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("release: %v", err)
	}

	// The semaphore mutex: held context, token; loss cancels with ErrLockLost.
	m, err := semaphore.NewMutex(c, path+"-mutex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.FencingToken(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Fatalf("token while not held: %v", err)
	}
	hctx, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := m.FencingToken(ctx); err != nil || tok <= last {
		t.Fatalf("mutex token %d (after %d): %v", tok, last, err)
	}
	if _, err := m.GuardedMulti(ctx, framework.CreateOp{Path: path + "-guarded"}); err != nil {
		t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hctx.Done():
	case <-ctx.Done():
		t.Fatal("held context not cancelled on loss")
	}
	if cause := context.Cause(hctx); !errors.Is(cause, curator.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", cause)
	}
	if err := m.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("unlock after loss: %v", err)
	}
}

// The release rule (package curator, "Releasing"): a Release whose delete
// cannot be confirmed now (the connection is cut) returns the lease and
// nil; the delete finishes in the background once the connection is back.
func TestLeaseReleaseWithDeletePendingSucceeds(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr(), framework.WithSessionTimeout(20*time.Second))
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := semPath(t)
	l, err := newSem(t, c, path, 1, semaphore.WithSuspendPolicy(curator.LoseOnLost)).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	px.Blackhole()
	short, cancel := context.WithTimeout(ctx, time.Second)
	err = l.Release(short)
	cancel()
	if err != nil {
		t.Fatalf("Release with its delete pending: %v, want nil", err)
	}
	if ok, _, err := other.Exists(ctx, l.Node()); err != nil || !ok {
		t.Fatalf("the lease node is gone already (%v, %v): the delete was not pending", ok, err)
	}
	px.Heal()
	if err := c.WaitBackground(ctx); err != nil {
		t.Fatalf("the background delete: %v", err)
	}
	l2, err := newSem(t, other, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatalf("a lease once the pending delete ran: %v", err)
	}
	if err := l2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
