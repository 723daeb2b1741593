// Package recipe holds what every recipe needs once: the argument checks of
// their constructors, the options they share, the context of a clean-up
// that must run even after the caller gave up, and an always-closed
// channel. It is internal: users import the recipes, never this.
package recipe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// CheckArgs returns an error wrapping curator.ErrInvalidArgument (and
// curator.ErrInvalidPath for an invalid path or /) when client is nil or
// path cannot hold a recipe: an invalid path, one in ZooKeeper's own
// subtree /zookeeper once the client's chroot and namespace are applied
// (framework's CheckCreatePath, Create's own check), or / (a recipe's
// nodes are children of its path; / belongs to everyone). what names the
// path in the message ("lock", "barrier"...).
func CheckArgs(client *framework.Client, what, path string) error {
	if client == nil {
		return fmt.Errorf("%w: nil client", curator.ErrInvalidArgument)
	}
	if path == "/" {
		return fmt.Errorf("%w: the %s path cannot be /", curator.ErrInvalidPath, what)
	}
	if err := client.CheckCreatePath(path); err != nil {
		return fmt.Errorf("%s path: %w", what, err)
	}
	return nil
}

// ErrNilContext is the error of a blocking call given a nil context.
var ErrNilContext = fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)

// CleanupTimeout bounds the foreground part of a clean-up delete (after a
// failed or abandoned acquisition, or a release); past it the delete goes on
// in the background, guaranteed by the framework.
const CleanupTimeout = 5 * time.Second

// CleanupContext is the context of such a clean-up: it keeps ctx's values
// but not its end (the caller's ctx may be done already), bounded by
// CleanupTimeout.
func CleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
}

// ClosedChan is a channel that is always closed: the Lost channel of
// something not held.
var ClosedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// DeleteOwn deletes a node of ours that is not a contender (a double
// barrier's member node; a contender's node is deleted by the driver's
// Contender.Delete, which also tells the handoff) the way every recipe
// deletes: guaranteed, so a delete that cannot be confirmed now goes on in
// the background until done (that counts as done: nil), and a node already
// gone is no error. Any other error is the server refusing the delete.
func DeleteOwn(ctx context.Context, client *framework.Client, node string) error {
	err := client.Delete(ctx, node, framework.WithGuarantee(), framework.WithIgnoreMissing())
	if errors.Is(err, curator.ErrDeletePending) {
		return nil
	}
	return err
}
