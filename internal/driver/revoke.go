package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
)

// watchRevocation waits, while the holding lasts, for a revocation request
// in its node and calls fn once if one comes.
func (h *Hold) watchRevocation(fn func()) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.stop:
		case <-h.lost:
		}
		cancel()
	}()
	for {
		data, _, w, err := h.c.d.client.GetW(ctx, h.c.node)
		if err != nil {
			return
		}
		if string(data) == layout.RevokeMessage {
			w.Stop()
			fn()
			return
		}
		select {
		case ev := <-w.C():
			if ev.Type != framework.EventNodeDataChanged {
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
