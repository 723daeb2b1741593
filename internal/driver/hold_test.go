package driver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// A holding that watches its node is lost as soon as someone else deletes
// the node (CURATOR-49): its context ends with ErrLockLost, and its
// goroutines end.
func TestHoldWatchNodeLosesOnDelete(t *testing.T) {
	later := testenv.RestoreLater(t) // before the clients: restored once they are closed
	c := testenv.Client(t, testenv.Shared().ConnectString())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	ct := acquired(t, ctx, c)
	token, err := ct.Verify(ctx)
	if err != nil || token == 0 {
		t.Fatalf("Verify of a held node: %d, %v", token, err)
	}
	armed := make(chan struct{}, 1)
	later(driver.SetNodeWatchHook(func(string) { notify(armed) }))
	const watcher = "internal/driver.(*Contender).Hold"
	testenv.WaitFor(t, testenv.WaitShort, "no node watcher of an earlier test", func() bool { return testenv.GoroutinesMadeBy(watcher) == 0 })
	h := ct.Hold(ctx, driver.HoldOptions{WatchNode: true, Token: token})
	<-armed
	if n := testenv.GoroutinesMadeBy(watcher); n != 1 {
		t.Fatalf("%d node watchers of the holding, want 1", n)
	}
	if tok, err := h.FencingToken(ctx); err != nil || tok != token {
		t.Fatalf("FencingToken = %d, %v; want the verified %d", tok, err, token)
	}
	if err := other.Delete(ctx, ct.Node()); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the holding lost", h.IsLost)
	if cause := context.Cause(h.Context()); !errors.Is(cause, curator.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", cause)
	}
	if _, err := ct.Verify(ctx); !errors.Is(err, curator.ErrNodeVanished) {
		t.Fatalf("Verify of a deleted node: %v, want ErrNodeVanished", err)
	}
	if err := h.Release(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("Release after the loss: %v, want ErrLockLost", err)
	}
	if _, w := c.WatchStats(); w != 0 {
		t.Fatalf("%d watch waiters left in the client", w)
	}
	// The client lives on: the holding's node watcher must end all the same.
	testenv.WaitFor(t, testenv.WaitShort, "the holding's node watcher to end", func() bool { return testenv.GoroutinesMadeBy(watcher) == 0 })
}

// KeepOnLoss: a holding lost to a suspended connection keeps its node while
// its session lives; the contender can hold again on it, and Release
// deletes it.
func TestHoldKeepOnLoss(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	ct := acquired(t, ctx, c)
	h := ct.Hold(ctx, driver.HoldOptions{WatchNode: true, KeepOnLoss: true})
	session := c.Session()
	px.Drop() // the connection drops; the session lives
	testenv.WaitFor(t, testenv.WaitShort, "the holding lost on suspension", h.IsLost)
	if err := ct.Wait(ctx, &driver.WaitOptions{}); err != nil {
		t.Fatalf("waiting again on the kept node: %v", err)
	}
	if c.Session() != session {
		t.Fatal("the session changed")
	}
	if _, err := ct.Verify(ctx); err != nil {
		t.Fatalf("the kept node: %v", err)
	}
	h2 := ct.Hold(ctx, driver.HoldOptions{WatchNode: true, KeepOnLoss: true})
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := testenv.Children(t, c, framework.ParentPath(ct.Node())); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
	if err := h.Release(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("releasing the first, lost holding: %v, want ErrLockLost", err)
	}
}

// TestLossSeenAlikeEverywhere: in the instant of a loss between the end of
// the held context and the closing of Lost (held there by a hook), whoever
// saw the context end finds the holding lost, with cause ErrLockLost; and
// whoever sees Lost closed finds that cause too (lose ends the context
// first). The leader's term watcher and the lock's Do each look from one
// side.
func TestLossSeenAlikeEverywhere(t *testing.T) {
	later := testenv.RestoreLater(t) // before the clients: restored once they are closed
	c := testenv.Client(t, testenv.Shared().ConnectString())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	ct := acquired(t, ctx, c)
	armed := make(chan struct{}, 1)
	later(driver.SetNodeWatchHook(func(string) { notify(armed) }))
	seen := make(chan string, 1)
	later(driver.SetLosingHook(func(h *driver.Hold) {
		var bad string
		switch {
		case h.Context().Err() == nil:
			bad = "the held context not ended yet"
		case !h.IsLost():
			bad = "IsLost false once the held context ended"
		case !errors.Is(context.Cause(h.Context()), curator.ErrLockLost):
			bad = fmt.Sprintf("cause %v", context.Cause(h.Context()))
		}
		select { // the first loss's finding; never block a loss
		case seen <- bad:
		default:
		}
	}))
	h := ct.Hold(ctx, driver.HoldOptions{WatchNode: true})
	<-armed
	if err := other.Delete(ctx, ct.Node()); err != nil {
		t.Fatal(err)
	}
	select {
	case bad := <-seen:
		if bad != "" {
			t.Fatal(bad)
		}
	case <-ctx.Done():
		t.Fatal("no loss")
	}
	<-h.Lost()
	if err := h.Release(ctx); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("Release after the loss: %v, want ErrLockLost", err)
	}
}

// acquired returns a contender of c that holds alone on a fresh path.
func acquired(t *testing.T, ctx context.Context, c *framework.Client) *driver.Contender {
	t.Helper()
	d, err := driver.New(c, testenv.Path(t, "/driver"), "latch-", driver.MaxLeases(1))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

// notify sends on ch without blocking: a hook must never hold up the
// goroutine that runs it (a second event finds the first still unread).
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
