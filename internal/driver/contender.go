package driver

import (
	"context"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Contender is one node of ours in a lock's queue.
type Contender struct {
	d       *Driver
	node    string // full path
	name    string
	session *framework.Session
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
	return recipe.DeleteOwn(ctx, c.d.client, c.node)
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
