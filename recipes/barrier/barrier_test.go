package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/testing/zktest"
)

func newBarrier(t testing.TB, c *framework.Client, path string) *barrier.Barrier {
	t.Helper()
	b, err := barrier.NewBarrier(c, path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitAsync runs b.Wait on a goroutine; the error arrives on the channel.
func waitAsync(ctx context.Context, b *barrier.Barrier) <-chan error {
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	return done
}

func receive(t testing.TB, ch <-chan error, d time.Duration, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
		return nil
	}
}

func TestNewBarrierInvalid(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	if _, err := barrier.NewBarrier(nil, "/b"); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil client: %v, want ErrInvalidArgument", err)
	}
	for _, p := range []string{"", "b", "/", "/b/", "/a//b", "/a/./b"} {
		if _, err := barrier.NewBarrier(c, p); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("path %q: %v, want ErrInvalidArgument", p, err)
		}
	}
	b := newBarrier(t, c, barrierPath(t))
	var nilCtx context.Context
	if err := b.Wait(nilCtx); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("Wait(nil): %v, want ErrInvalidArgument", err)
	}
}

// Curator's testNoBarrier, and what Curator gets wrong: waiting on a
// barrier that is not set leaves no watch on the server (Curator's exists
// watch stays on the missing node until someone creates it).
func TestBarrierNoBarrier(t *testing.T) {
	waitServerWatches(t, 0)
	c := newClient(t, quiet.ConnectString())
	b := newBarrier(t, c, barrierPath(t))
	for range 5 {
		if err := b.Wait(testenv.Ctx(t, testenv.WaitShort)); err != nil {
			t.Fatalf("Wait with no barrier: %v", err)
		}
	}
	if got, err := quiet.WatchCount(); err != nil || got != 0 {
		t.Errorf("server watch count after waiting on no barrier: %d (%v), want 0", got, err)
	}
	if w := sessionWatches(t, c.Session().ID()); len(w) != 0 {
		t.Errorf("our session watches %v on the server", w)
	}
	if armed, waiters := c.WatchStats(); armed != 0 || waiters != 0 {
		t.Errorf("WatchStats = %d armed, %d waiters; want 0, 0", armed, waiters)
	}
}

// Curator's testBasic: set, wait, removed while waiting.
func TestBarrierBasic(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	b := newBarrier(t, c, path)
	if err := b.Set(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	done := waitAsync(testenv.Ctx(t, testenv.WaitShort), b)
	waitWaiters(t, c, 1)
	select {
	case err := <-done:
		t.Fatalf("Wait returned while the barrier is set: %v", err)
	default:
	}
	if err := b.Remove(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, done, testenv.WaitShort, "Wait"); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	waitWaiters(t, c, 0)
}

// Set and Remove are idempotent; the barrier node is persistent.
func TestBarrierSetRemoveIdempotent(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	b := newBarrier(t, c, path)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	for range 2 {
		if err := b.Set(ctx); err != nil {
			t.Fatalf("Set: %v", err)
		}
	}
	ok, st, err := c.Exists(ctx, path)
	if err != nil || !ok {
		t.Fatalf("barrier node: %v %v", ok, err)
	}
	if st.EphemeralOwner != 0 {
		t.Errorf("barrier node is ephemeral (owner 0x%x)", st.EphemeralOwner)
	}
	for range 2 {
		if err := b.Remove(ctx); err != nil {
			t.Fatalf("Remove: %v", err)
		}
	}
	if err := b.Wait(ctx); err != nil {
		t.Fatalf("Wait after Remove: %v", err)
	}
}

// Curator's testMultiClient: two clients wait with a tiny timeout, over
// and over, until the barrier is removed; no errors but timeouts, and
// nothing of the waiters stays in the clients.
func TestBarrierMultiClient(t *testing.T) {
	t.Parallel()
	path := barrierPath(t)
	setter := newClient(t, testenv.Shared().ConnectString())
	b := newBarrier(t, setter, path)
	if err := b.Set(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	clients := []*framework.Client{newClient(t, testenv.Shared().ConnectString()), newClient(t, testenv.Shared().ConnectString())}
	var timeouts [2]atomic.Int64
	done := make(chan []error, 1)
	go func() {
		done <- group(2, func(i int) error {
			wb, err := barrier.NewBarrier(clients[i], path)
			if err != nil {
				return err
			}
			deadline := time.Now().Add(testenv.WaitShort)
			for time.Now().Before(deadline) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				err := wb.Wait(ctx)
				cancel()
				if err == nil {
					return nil
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					return err
				}
				timeouts[i].Add(1)
			}
			return errors.New("barrier never came down")
		})
	}()
	testenv.Eventually(t, testenv.WaitShort, "both waiters timing out", func() error {
		if a, b := timeouts[0].Load(), timeouts[1].Load(); a < 3 || b < 3 {
			return fmt.Errorf("timeouts %d, %d", a, b)
		}
		return nil
	})
	if err := b.Remove(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	select {
	case errs := <-done:
		checkErrs(t, errs)
	case <-time.After(testenv.WaitShort):
		t.Fatal("waiters did not finish")
	}
	for i, c := range clients {
		if _, waiters := c.WatchStats(); waiters != 0 {
			t.Errorf("client %d keeps %d watch waiters", i, waiters)
		}
	}
}

// A waiter that gives up stops its watch at once; the server's data watch
// on the (existing) barrier node, one per client however many waiters
// came and went, goes when the barrier is removed.
func TestBarrierTimeoutLeavesNoWatch(t *testing.T) {
	waitServerWatches(t, 0)
	c := newClient(t, quiet.ConnectString())
	path := barrierPath(t)
	b := newBarrier(t, c, path)
	if err := b.Set(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := b.Wait(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait on a set barrier: %v, want DeadlineExceeded", err)
		}
	}
	if _, waiters := c.WatchStats(); waiters != 0 {
		t.Errorf("%d watch waiters after the waits gave up", waiters)
	}
	if got, err := quiet.WatchCount(); err != nil || got != 1 {
		t.Errorf("server watch count %d (%v), want 1 (the data watch on the barrier node)", got, err)
	}
	if err := b.Remove(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	waitServerWatches(t, 0)
	testenv.Eventually(t, testenv.WaitShort, "client watch entries gone", func() error {
		if armed, waiters := c.WatchStats(); armed != 0 || waiters != 0 {
			return fmt.Errorf("%d armed, %d waiters", armed, waiters)
		}
		return nil
	})
}

// Curator's testServerCrash (connection timeout 1 s, RetryOneTime): the
// server dies while we wait; Wait ends with an error instead of hanging.
// The error says the session was lost (declared so after the session
// timeout spent disconnected), or, if the server died before its reply to
// the read that set the watch went out, that the connection was lost (the
// read's retries ran out), as in Curator.
func TestBarrierServerCrash(t *testing.T) {
	t.Parallel()
	srv := zktest.StartServer(t)
	once, err := retry.NewOneTime(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv.ConnectString(), framework.WithConnectionTimeout(time.Second), framework.WithRetryPolicy(once))
	path := barrierPath(t)
	b := newBarrier(t, c, path)
	if err := b.Set(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	done := waitAsync(testenv.Ctx(t, testenv.WaitLong), b)
	waitWatched(t, srv, c.Session().ID(), path)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	err = receive(t, done, testenv.WaitShort, "Wait after the server crashed")
	if !errors.Is(err, curator.ErrSessionLost) && !errors.Is(err, curator.ErrConnectionLoss) {
		t.Fatalf("Wait after the server crashed: %v, want ErrSessionLost or ErrConnectionLoss", err)
	}
}

// Closing the client ends a Wait with curator.ErrClosed.
func TestBarrierClientClosed(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	b := newBarrier(t, c, path)
	if err := b.Set(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	other := newClient(t, testenv.Shared().ConnectString())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitShort)
		defer cancel()
		newBarrier(t, other, path).Remove(ctx)
	})
	done := waitAsync(testenv.Ctx(t, testenv.WaitShort), b)
	waitWaiters(t, c, 1)
	c.Close()
	if err := receive(t, done, testenv.WaitShort, "Wait after Close"); !errors.Is(err, curator.ErrClosed) {
		t.Fatalf("Wait after Close: %v, want ErrClosed", err)
	}
}
