package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// HoldOptions tune a Hold.
type HoldOptions struct {
	// Policy says when the holding counts as lost (default LoseOnSuspend).
	Policy curator.SuspendPolicy
	// OnRevoke, if not nil, is called once (on a goroutine of its own) with
	// the held context if a revocation request (RevokeMessage) is written
	// into the node while it is held: Curator's makeRevocable.
	OnRevoke func(held context.Context)
	// WatchNode makes the holding watch its own node too: if someone else
	// deletes it (an operator, a script, a wiped ensemble), the holding is
	// lost at once, instead of going on believing it holds while the next
	// contender takes over (Curator's leader recipes watch only their
	// predecessor: CURATOR-49).
	WatchNode bool
	// KeepOnLoss: a holding lost while its session lives (its connection
	// suspended) keeps its node, for the caller to hold again once the
	// connection is back or to delete (Release still deletes it). Default: the
	// node of a lost holding is deleted in the background, since it only
	// blocks others now.
	KeepOnLoss bool
	// Token is the fencing token if the caller knows it already (from
	// Contender.Verify); 0 means read it when first asked.
	Token int64
}

// Hold is one holding of a contender that holds (a lock, a lease, a
// leadership): the held context, cancelled when the holding ends (cause
// curator.ErrLockLost when it is lost), the Lost channel, the fencing
// token, guarded writes and the release. When the holding is lost its node
// is deleted in the background (guaranteed), since it only blocks others
// now, unless HoldOptions.KeepOnLoss.
type Hold struct {
	c      *Contender
	ctx    context.Context
	cancel context.CancelCauseFunc
	keep   bool

	lost     chan struct{}
	loseOnce sync.Once

	// The monitor is callbacks on the session (no goroutine waits): stops
	// cancels them, and mon makes the reaction to a loss happen at most
	// once, and lets Release wait for one under way.
	stops [2]func() bool // the session's end; its suspension (LoseOnSuspend)
	mon   sync.Once
	off   sync.Once // stopMonitor's, once (Release or Forget)

	// The node watch (revocation, WatchNode), a goroutine when asked for.
	wctx    context.Context
	wcancel context.CancelFunc
	wdone   chan struct{} // closed once the node watch has ended (nil if none)

	tokenMu sync.Mutex
	token   int64

	note lossNotePtr // who is told of a loss, and why (observe.go)
}

// testHookLosing, set only by tests, runs in a loss between the end of
// the held context and the closing of Lost.
var testHookLosing func(h *Hold)

// errReleased is the cause of a held context's end when the holding is
// released.
var errReleased = errors.New("released")

// Hold starts holding c (which the caller's predicate says holds). The held
// context carries parent's values but not its cancellation.
func (c *Contender) Hold(parent context.Context, o HoldOptions) *Hold {
	h := &Hold{c: c, keep: o.KeepOnLoss, token: o.Token, lost: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancelCause(context.WithoutCancel(parent))
	if o.OnRevoke != nil || o.WatchNode {
		h.wctx, h.wcancel = context.WithCancel(context.Background())
		h.wdone = make(chan struct{})
		go h.watchNode(o.OnRevoke, o.WatchNode)
	}
	h.stops[0] = context.AfterFunc(c.session.Context(), h.onLoss)
	if o.Policy == curator.LoseOnSuspend {
		h.stops[1] = c.session.AfterSuspend(h.onLoss)
	}
	holdings.Add(1)
	return h
}

// holdings counts the holdings neither released nor forgotten (Holdings).
var holdings atomic.Int64

// Holdings returns how many holdings of the process are neither released
// nor forgotten: tests check with it that none is left behind, its
// callbacks on a session that lives on.
func Holdings() int64 { return holdings.Load() }

// Forget ends the monitor of a holding the caller lets go without a
// release: a lost one, whose node its loss has dealt with (deleted, or
// kept for the caller: KeepOnLoss). Until then its callbacks stay on its
// session, one more for every term lost in a long session. It returns once
// the node watch has ended.
func (h *Hold) Forget() { h.stopMonitor() }

// onLoss is the monitor's reaction, once: the holding can no longer be
// relied on (its session is lost, or its connection suspended under
// LoseOnSuspend). The node then only blocks others: it is deleted in the
// background, unless kept for the caller (KeepOnLoss, session alive). A
// loss found otherwise first (the node watch, a guarded write) is left as
// it is.
func (h *Hold) onLoss() {
	h.mon.Do(func() {
		if h.IsLost() {
			return
		}
		why := whySuspended
		if h.c.session.Lost() {
			why = fmt.Sprintf("session lost (%v)", h.c.session.Err())
		}
		h.lose(why)
		if !h.keep || h.c.session.Lost() {
			h.c.d.client.DeleteInBackground(h.c.node, framework.WithIgnoreMissing())
		}
	})
}

// stopMonitor ends the monitor and the node watch. A loss that came
// before (a callback started) is recorded before it returns, never
// dropped: a release never hides a loss.
func (h *Hold) stopMonitor() { h.off.Do(h.stopMonitorOnce) }

func (h *Hold) stopMonitorOnce() {
	defer holdings.Add(-1)
	fired := false
	for _, stop := range h.stops {
		if stop != nil && !stop() {
			fired = true
		}
	}
	if fired {
		h.onLoss() // or waits for the callback's own, under way
	} else {
		h.mon.Do(func() {}) // none can start now
	}
	if h.wcancel != nil {
		h.wcancel()
		<-h.wdone
	}
}

// lose records the loss once: ends the held context with cause
// curator.ErrLockLost (saying why), then closes lost, so that whoever sees
// Lost closed finds that cause (context.Cause) too.
func (h *Hold) lose(why string) {
	h.loseOnce.Do(func() {
		h.cancel(fmt.Errorf("%w: %s: %s", curator.ErrLockLost, h.c.node, why))
		if testHookLosing != nil {
			testHookLosing(h)
		}
		close(h.lost)
		if h.wcancel != nil {
			h.wcancel()
		}
		h.noteLoss(why) // observe.go
	})
}

// Contender returns the contender held.
func (h *Hold) Contender() *Contender { return h.c }

// Node returns the held node's path.
func (h *Hold) Node() string { return h.c.node }

// Context returns the held context: cancelled when the holding is lost
// (cause curator.ErrLockLost) or released.
func (h *Hold) Context() context.Context { return h.ctx }

// Lost returns a channel closed when the holding is lost, including a loss
// found only by Release, a fencing read, a guarded write or the node watch.
func (h *Hold) Lost() <-chan struct{} { return h.lost }

// IsLost reports whether the holding is lost. It agrees with the held
// context: once that is done with cause curator.ErrLockLost, IsLost is
// true, even in the instant before Lost is closed.
func (h *Hold) IsLost() bool {
	select {
	case <-h.lost:
		return true
	default:
		return errors.Is(context.Cause(h.ctx), curator.ErrLockLost)
	}
}

// LostErr is the error of a use of the holding after its loss.
func (h *Hold) LostErr() error { return fmt.Errorf("%w: %s", curator.ErrLockLost, h.c.node) }

// Release ends the holding and deletes its node (guaranteed, only ours);
// call it once. It follows the module's release rule (see package curator,
// "Releasing"): nil once the node is deleted or its delete goes on in the
// background; an error wrapping curator.ErrLockLost if the holding had been
// lost, or its node was found already gone (its session expired before the
// client noticed, or someone deleted it; Lost is closed then); the
// server's error if it refused the delete. A delete whose reply was lost
// and whose retry then finds the node gone counts as a loss too: the two
// cannot be told apart, and a false alarm is the safe side.
func (h *Hold) Release(ctx context.Context) error { return h.ReleaseCause(ctx, errReleased) }

// ReleaseCause is Release that ends the held context with the given cause
// (context.Cause of Context) instead of a plain "released": a recipe says
// why it let go (resigned, closed). It returns once the holding's
// goroutines have ended.
func (h *Hold) ReleaseCause(ctx context.Context, cause error) error {
	h.stopMonitor()
	live := ctx.Err() == nil
	h.cancel(cause)
	if live && ctx.Err() != nil {
		// ctx is the held context, or made from it (Unlock(held)): ended
		// by this release, it must not cut the delete short, or a node
		// found gone would go unreported.
		var cancel context.CancelFunc
		ctx, cancel = recipe.CleanupContext(ctx)
		defer cancel()
	}
	if h.IsLost() {
		if h.keep { // its node was kept for us: it goes now
			h.c.d.client.DeleteInBackground(h.c.node, framework.WithIgnoreMissing())
		}
		return fmt.Errorf("%w: %s (released locally)", curator.ErrLockLost, h.c.node)
	}
	err := h.c.d.client.Delete(ctx, h.c.node, framework.WithGuarantee())
	switch {
	case err == nil:
		h.c.gone()
		return nil
	case errors.Is(err, curator.ErrDeletePending):
		return nil
	case errors.Is(err, zk.ErrNoNode):
		h.lose("its node was gone when released")
		return fmt.Errorf("%w: %s was gone when released: %w", curator.ErrLockLost, h.c.node, err)
	case errors.Is(err, curator.ErrClosed): // the node went with the session
		h.lose(whyClientClosed)
		return fmt.Errorf("%w: %s: %w", curator.ErrLockLost, h.c.node, err)
	}
	return err
}

// FencingToken returns the creation zxid of the held node, read once: it
// strictly increases from one holder to the next (unlike the sequence
// number, which restarts when a reaped lock path is recreated).
func (h *Hold) FencingToken(ctx context.Context) (int64, error) {
	h.tokenMu.Lock()
	defer h.tokenMu.Unlock()
	if h.IsLost() { // a token known already is no use to a lost holding either
		return 0, h.LostErr()
	}
	if h.token != 0 {
		return h.token, nil
	}
	ok, st, err := h.c.d.client.Exists(ctx, h.c.node)
	if err != nil {
		return 0, err
	}
	if !ok {
		h.lose("its node was gone when its fencing token was read")
		return 0, h.LostErr()
	}
	h.token = st.Czxid
	return h.token, nil
}

// GuardedMulti runs ops in one transaction with a check that the held node
// still exists: the writes happen only while the holding lasts (etcd's
// IsOwner guard). A check that finds the node gone records the loss (Lost
// closes, the held context ends) and the error wraps curator.ErrLockLost.
func (h *Hold) GuardedMulti(ctx context.Context, ops []framework.Op) ([]framework.OpResult, error) {
	if h.IsLost() {
		return nil, h.LostErr()
	}
	all := append([]framework.Op{framework.CheckOp{Path: h.c.node, Version: -1}}, ops...)
	res, err := h.c.d.client.Multi(ctx, all...)
	if err != nil && len(res) > 0 && errors.Is(res[0].Err, zk.ErrNoNode) {
		h.lose("its node was gone at a guarded write") // our node is gone: the holding ended by loss
		return res[1:], errors.Join(h.LostErr(), err)
	}
	if len(res) > 0 {
		res = res[1:]
	}
	return res, err
}
