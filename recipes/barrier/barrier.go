package barrier

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Barrier is a distributed barrier, the Go counterpart of Curator's
// DistributedBarrier: while its node exists the barrier is up and Wait
// blocks; once the node is removed every waiter goes on. One process (or
// any) calls Set and later Remove; the others Wait. A Barrier holds no
// state of its own and is safe for concurrent use.
type Barrier struct {
	client *framework.Client
	path   string
}

// NewBarrier returns a barrier on the node path. It does no I/O; it fails
// (wrapping curator.ErrInvalidArgument) for a nil client or an invalid path.
func NewBarrier(client *framework.Client, path string) (*Barrier, error) {
	if err := recipe.CheckArgs(client, "barrier", path); err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	return &Barrier{client: client, path: path}, nil
}

// Path returns the barrier's node path.
func (b *Barrier) Path() string { return b.path }

// Set raises the barrier: it creates the barrier node (persistent, with the
// client's default data; missing parents are made as container nodes). A
// barrier already set is not an error (Curator's setBarrier).
func (b *Barrier) Set(ctx context.Context) error {
	_, err := b.client.Create(ctx, b.path, b.client.DefaultData(), framework.WithParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("barrier: set %s: %w", b.path, err)
	}
	return nil
}

// Remove lowers the barrier: it deletes the barrier node, which releases
// every waiter. A barrier not set is not an error (Curator's removeBarrier).
func (b *Barrier) Remove(ctx context.Context) error {
	if err := b.client.Delete(ctx, b.path, framework.WithIgnoreMissing()); err != nil {
		return fmt.Errorf("barrier: remove %s: %w", b.path, err)
	}
	return nil
}

// Wait blocks while the barrier is set (Curator's waitOnBarrier). It
// returns nil at once if the barrier is not set, and nil once it has been
// removed. Otherwise it returns an error wrapping ctx.Err() when ctx is
// done, curator.ErrSessionLost when the client's session is lost while
// waiting (for a partitioned or crashed server: after the session timeout
// spent disconnected), curator.ErrClosed when the client is closed, or
// the error of the read.
//
// Wait watches the barrier node with getData, never exists: when the node
// is absent getData fails and leaves no watch on the server (Curator's
// exists() leaves one on the missing node, which stays until someone
// creates that node). While the barrier is set, the server holds one data
// watch on the barrier node per client, shared by every waiter of that
// client; a waiter that gives up drops its share at once, and the server's
// watch goes when the node is removed or changed (ZooKeeper as spoken by
// go-zookeeper cannot remove a watch). A brief disconnection is ridden
// out: the client sets the watch again when it reconnects in the same
// session, and a removal meanwhile is reported then.
func (b *Barrier) Wait(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	for {
		_, _, w, err := b.client.GetW(ctx, b.path)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("barrier: wait on %s: %w", b.path, err)
		}
		select {
		case ev := <-w.C():
			w.Stop()
			if ev.Type == framework.EventNotWatching {
				return fmt.Errorf("barrier: wait on %s: %w", b.path, ev.Err)
			}
			// Deleted, or its data changed: look again.
		case <-ctx.Done():
			w.Stop()
			return fmt.Errorf("barrier: wait on %s: %w", b.path, ctx.Err())
		}
	}
}
