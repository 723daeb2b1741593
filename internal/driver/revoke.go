package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
)

// watchRetryPause is how long the node watch waits before trying again
// after the retry loop gave up on a read (a long disconnection).
const watchRetryPause = 200 * time.Millisecond

// testHookNodeWatch, set only by tests, runs each time the node watch has
// armed its watch on the held node.
var testHookNodeWatch func(node string)

// watchNode watches the held node while the holding lasts: a revocation
// request in its data calls onRevoke once (on a goroutine of its own);
// with lossOnDelete, the node's deletion by someone else loses the holding.
// Without lossOnDelete (revocation only) it never retries: it stops at a
// failed read, at the first event that is not a data change, and once the
// request is seen.
func (h *Hold) watchNode(onRevoke func(held context.Context), lossOnDelete bool) {
	defer close(h.wdone)
	ctx := h.wctx
	client := h.c.d.client
	for {
		data, _, w, err := client.GetW(ctx, h.c.node)
		switch {
		case err == nil:
		case ctx.Err() != nil || errors.Is(err, curator.ErrClosed):
			return
		case errors.Is(err, zk.ErrNoNode):
			if lossOnDelete {
				h.lose("its node was deleted")
			}
			return
		default:
			if !lossOnDelete || h.c.session.Lost() {
				return // the monitor tells of a lost session
			}
			t := time.NewTimer(watchRetryPause)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		if testHookNodeWatch != nil {
			testHookNodeWatch(h.c.node)
		}
		if onRevoke != nil && string(data) == layout.RevokeMessage {
			go onRevoke(h.ctx)
			onRevoke = nil
			if !lossOnDelete {
				w.Stop()
				return
			}
		}
		select {
		case ev := <-w.C():
			switch {
			case ev.Type == framework.EventNodeDeleted:
				if lossOnDelete && ctx.Err() == nil {
					h.lose("its node was deleted")
				}
				return
			case ev.Type == framework.EventNotWatching:
				return // session lost or client closed: the monitor tells
			case ev.Type != framework.EventNodeDataChanged && !lossOnDelete:
				return
			}
		case <-ctx.Done():
			w.Stop()
			return
		}
	}
}

// Revoke asks the holder of a lock node to release it (Curator's
// Revoker.attemptRevoke): it writes layout.RevokeMessage into the node. Holders
// that armed revocation release; others ignore it. A node already gone is
// not an error.
func Revoke(ctx context.Context, client *framework.Client, node string) error {
	if client == nil {
		return fmt.Errorf("revoke: %w: nil client", curator.ErrInvalidArgument)
	}
	_, err := client.Set(ctx, node, []byte(layout.RevokeMessage))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
