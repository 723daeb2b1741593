package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// HoldOptions tune a Hold.
type HoldOptions struct {
	// Policy says when the holding counts as lost (default LoseOnSuspend).
	Policy curator.SuspendPolicy
	// OnRevoke, if not nil, is called once (on a goroutine of its own) if a
	// revocation request (RevokeMessage) is written into the node while it
	// is held: Curator's makeRevocable.
	OnRevoke func()
}

// Hold is one holding of a contender that holds (a lock, a lease): the held
// context, cancelled when the holding ends (cause curator.ErrLockLost when
// it is lost), the Lost channel, the fencing token, guarded writes and the
// release. When the holding is lost its node is deleted in the background
// (guaranteed), since it only blocks others now.
type Hold struct {
	c      *Contender
	ctx    context.Context
	cancel context.CancelCauseFunc

	lost     chan struct{}
	loseOnce sync.Once
	stop     chan struct{} // ends the monitor and revocation watching
	stopOnce sync.Once
	done     chan struct{} // closed once the monitor has ended

	tokenMu sync.Mutex
	token   int64
}

// errReleased is the cause of a held context's end when the holding is
// released.
var errReleased = errors.New("released")

// Hold starts holding c (which the caller's predicate says holds). The held
// context carries parent's values but not its cancellation.
func (c *Contender) Hold(parent context.Context, o HoldOptions) *Hold {
	h := &Hold{c: c, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancelCause(context.WithoutCancel(parent))
	var susp <-chan struct{}
	if o.Policy == curator.LoseOnSuspend {
		susp = c.session.Suspended()
	}
	go h.monitor(susp)
	if o.OnRevoke != nil {
		go h.watchRevocation(o.OnRevoke)
	}
	return h
}

// monitor closes lost when the holding can no longer be relied on: its
// session is lost or (susp not nil) its connection suspended.
func (h *Hold) monitor(susp <-chan struct{}) {
	defer close(h.done)
	select {
	case <-h.stop:
		return
	case <-h.c.session.Done():
	case <-susp:
	}
	h.lose()
	h.c.d.client.DeleteInBackground(h.c.node, framework.WithIgnoreMissing())
}

// lose records the loss once: closes lost and ends the held context with
// cause curator.ErrLockLost.
func (h *Hold) lose() {
	h.loseOnce.Do(func() {
		close(h.lost)
		h.cancel(fmt.Errorf("%w: %s", curator.ErrLockLost, h.c.node))
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
// found only by Release, a fencing read or a guarded write.
func (h *Hold) Lost() <-chan struct{} { return h.lost }

// IsLost reports whether the holding is lost.
func (h *Hold) IsLost() bool {
	select {
	case <-h.lost:
		return true
	default:
		return false
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
func (h *Hold) Release(ctx context.Context) error {
	h.stopOnce.Do(func() { close(h.stop) })
	<-h.done
	h.cancel(errReleased)
	if h.IsLost() { // its node is already being deleted; say what happened
		return fmt.Errorf("%w: %s (released locally)", curator.ErrLockLost, h.c.node)
	}
	err := h.c.d.client.Delete(ctx, h.c.node, framework.WithGuarantee())
	switch {
	case err == nil, errors.Is(err, curator.ErrDeletePending):
		return nil
	case errors.Is(err, zk.ErrNoNode):
		h.lose()
		return fmt.Errorf("%w: %s was gone when released: %w", curator.ErrLockLost, h.c.node, err)
	case errors.Is(err, curator.ErrClosed): // the node went with the session
		h.lose()
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
	if h.token != 0 {
		return h.token, nil
	}
	if h.IsLost() {
		return 0, h.LostErr()
	}
	ok, st, err := h.c.d.client.Exists(ctx, h.c.node)
	if err != nil {
		return 0, err
	}
	if !ok {
		h.lose()
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
		h.lose() // our node is gone: the holding ended by loss
		return res[1:], errors.Join(h.LostErr(), err)
	}
	if len(res) > 0 {
		res = res[1:]
	}
	return res, err
}
