package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// hold is one holding of a lock by an instance: its contender node, its
// reentrancy count, the held context, and the Monitor that closes lost when
// the lock can no longer be relied on.
type hold struct {
	c      *Contender
	count  int
	mon    *Monitor
	lost   <-chan struct{}
	stop   chan struct{} // ends revocation watching
	ctx    context.Context
	cancel context.CancelCauseFunc

	tokenMu sync.Mutex
	token   int64
}

// errReleased is the cause of a held context's end when the lock is released.
var errReleased = errors.New("locks: released")

func newHold(ctx context.Context, key any, c *Contender, o *options) *hold {
	h := &hold{c: c, count: 1, stop: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), key, h))
	if o.onRevoke != nil {
		go c.WatchRevocation(h.stop, o.onRevoke)
	}
	h.mon = c.Monitor(o.policy, func() { h.cancel(ErrLockLost) })
	h.lost = h.mon.Lost()
	return h
}

// isLost reports whether the lock was lost.
func (h *hold) isLost() bool { return h.mon.IsLost() }

// end stops watching and ends the held context.
func (h *hold) end() {
	close(h.stop)
	h.mon.Stop()
	h.cancel(errReleased)
}

// release ends the holding and deletes its node (guaranteed, only ours).
// A release never hides a loss: if the holding had been lost, or its node
// was gone already (its session expired before the client noticed and the
// delete ran in the new session; someone deleted it), the error wraps
// ErrLockLost and Lost is closed. A delete whose reply was lost and whose
// retry then finds the node gone counts as a loss too: the two cannot be
// told apart, and a false alarm is the safe side.
func (h *hold) release(ctx context.Context) error {
	h.end()
	if h.isLost() { // its node is already being deleted; say what happened
		return fmt.Errorf("%w: %s (released locally)", ErrLockLost, h.c.node)
	}
	err := h.c.d.client.Delete(ctx, h.c.node, framework.Guaranteed())
	if errors.Is(err, zk.ErrNoNode) {
		h.mon.lose()
		return fmt.Errorf("%w: %s was gone when released: %w", ErrLockLost, h.c.node, err)
	}
	return err
}

// fencingToken returns the creation zxid of our node, read once.
func (h *hold) fencingToken(ctx context.Context) (int64, error) {
	h.tokenMu.Lock()
	defer h.tokenMu.Unlock()
	if h.token != 0 {
		return h.token, nil
	}
	if h.isLost() {
		return 0, ErrLockLost
	}
	ok, st, err := h.c.d.client.Exists(ctx, h.c.node)
	if err != nil {
		return 0, err
	}
	if !ok {
		h.mon.lose()
		return 0, ErrLockLost
	}
	h.token = st.Czxid
	return h.token, nil
}

// guardedMulti runs ops in one transaction with a check that our node still
// exists: the writes happen only while we hold the lock. A check that finds
// the node gone records the loss (Lost closes, the held context ends).
func (h *hold) guardedMulti(ctx context.Context, ops []framework.Op) ([]framework.OpResult, error) {
	if h.isLost() {
		return nil, ErrLockLost
	}
	all := append([]framework.Op{framework.CheckOp{Path: h.c.node, Version: -1}}, ops...)
	res, err := h.c.d.client.Multi(ctx, all...)
	if err != nil && len(res) > 0 && errors.Is(res[0].Err, zk.ErrNoNode) {
		h.mon.lose() // our node is gone: the holding ended by loss
		return res[1:], errors.Join(ErrLockLost, err)
	}
	if len(res) > 0 {
		res = res[1:]
	}
	return res, err
}

// Hold is a holding of a lock-like recipe built on a Driver, for recipes of
// other packages (the semaphore's leases): the node, a held context
// cancelled when the holding ends (cause ErrLockLost when it is lost), a
// Lost channel, a fencing token and guarded writes, exactly as a Mutex's.
type Hold struct{ h *hold }

// NewHold starts holding c (which the caller's predicate says holds) under
// policy. The held context carries ctx's values but not its cancellation.
func NewHold(ctx context.Context, c *Contender, policy SuspendPolicy) *Hold {
	return &Hold{newHold(ctx, holdKey{}, c, &options{policy: policy})} // holdKey{}: no Mutex re-enters it
}

// Node returns the held node's path.
func (h *Hold) Node() string { return h.h.c.node }

// Context returns the held context: cancelled when the holding is lost
// (cause ErrLockLost) or released.
func (h *Hold) Context() context.Context { return h.h.ctx }

// Lost returns a channel closed when the holding is lost, including a loss
// found only by Release.
func (h *Hold) Lost() <-chan struct{} { return h.h.lost }

// FencingToken returns the creation zxid of the held node (see
// Mutex.FencingToken).
func (h *Hold) FencingToken(ctx context.Context) (int64, error) { return h.h.fencingToken(ctx) }

// GuardedMulti runs ops in one transaction that succeeds only while the
// node is held (see Mutex.GuardedMulti).
func (h *Hold) GuardedMulti(ctx context.Context, ops ...framework.Op) ([]framework.OpResult, error) {
	return h.h.guardedMulti(ctx, ops)
}

// Release ends the holding and deletes its node; call it once. Its errors
// are Mutex.Unlock's: ErrLockLost if the holding was lost (also when the
// node was found gone), framework.ErrDeletePending if the delete goes on in
// the background.
func (h *Hold) Release(ctx context.Context) error { return h.h.release(ctx) }
