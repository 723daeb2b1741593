package locks

import (
	"context"
	"errors"
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
		return 0, ErrLockLost
	}
	h.token = st.Czxid
	return h.token, nil
}

// guardedMulti runs ops in one transaction with a check that our node still
// exists: the writes happen only while we hold the lock.
func (h *hold) guardedMulti(ctx context.Context, ops []framework.Op) ([]framework.OpResult, error) {
	if h.isLost() {
		return nil, ErrLockLost
	}
	all := append([]framework.Op{framework.CheckOp{Path: h.c.node, Version: -1}}, ops...)
	res, err := h.c.d.client.Multi(ctx, all...)
	if err != nil && len(res) > 0 && errors.Is(res[0].Err, zk.ErrNoNode) {
		return res[1:], errors.Join(ErrLockLost, err)
	}
	if len(res) > 0 {
		res = res[1:]
	}
	return res, err
}
