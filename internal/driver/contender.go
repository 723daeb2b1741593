package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocurator/curator"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Contender is one node of ours in a lock's queue.
type Contender struct {
	d       *Driver
	node    string // full path
	name    string
	seq     string // its sort key
	session *framework.Session
	// siblings: how many children its path had right after its create
	// (itself included), 0 if unknown. One alone needs no read of the
	// queue for its first decision: sequences only grow, so no contender
	// can come before it (one use: Wait clears it).
	siblings int
	// listed: the queue as listed right behind the create
	// (framework.WithParentChildren), nil if it was not (one use: Wait
	// clears it).
	listed *Queue
	// czxid: the incarnation of the lock path our node is in (its czxid):
	// that of the last reading that listed our node, else of the parent
	// read behind the create; 0 if unknown. Our going is recorded under it
	// (handoff.go, 3.).
	czxid int64
}

// Node returns the contender's node path.
func (c *Contender) Node() string { return c.node }

// Name returns the contender's node name.
func (c *Contender) Name() string { return c.name }

// Session returns the session the contender's node belongs to; the node
// (and so the lock) is gone once Session().Done() is closed.
func (c *Contender) Session() *framework.Session { return c.session }

// Delete deletes the contender's node: guaranteed (retried in the
// background until done if it cannot be confirmed now: that counts as
// done, nil) and only ever our own node; a node already gone is no error.
// Any other error is the server refusing the delete.
func (c *Contender) Delete(ctx context.Context) error {
	err := c.d.client.Delete(ctx, c.node, framework.WithGuarantee(), framework.WithIgnoreMissing())
	switch {
	case err == nil:
		c.gone()
	case errors.Is(err, curator.ErrDeletePending):
		return nil // it goes in the background: not known gone yet
	}
	return err
}

// gone tells the waiters of this client that our node is deleted (the
// handoff, handoff.go).
func (c *Contender) gone() {
	if c.d.handoff {
		c.d.handoffs.deleted(c.d.client, c.d.path, c.czxid, c.name)
	}
}

// DeleteQuietly deletes the node after a failed or abandoned acquisition,
// with a context of its own (the caller's may be done: the node must not
// stay behind), and logs a refusal.
func (c *Contender) DeleteQuietly(ctx context.Context) {
	ctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	if err := c.Delete(ctx); err != nil {
		c.d.client.Logger().Warn("deleting a contender node after a failed acquire", "node", c.node, "err", err)
	}
}

// Verify confirms on the server that the contender's node exists and is an
// ephemeral node of the contender's session, which the client has not
// declared lost: what a holder checks before it relies on holding (Curator's
// LeaderLatch checks the owner since CURATOR-696, after electing itself on a
// node of an expiring session). It returns the node's creation zxid, the
// fencing token. A node gone, or not of that session, is an error wrapping
// curator.ErrNodeVanished.
func (c *Contender) Verify(ctx context.Context) (int64, error) {
	ok, st, err := c.d.client.Exists(ctx, c.node)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, c.vanished()
	}
	if st.EphemeralOwner != c.session.ID() || c.session.Lost() {
		return 0, fmt.Errorf("%w: %s is owned by session 0x%x, ours is 0x%x (lost: %v)",
			curator.ErrNodeVanished, c.node, uint64(st.EphemeralOwner), uint64(c.session.ID()), c.session.Lost())
	}
	return st.Czxid, nil
}
