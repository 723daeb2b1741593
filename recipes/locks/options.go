package locks

import (
	"context"
	"fmt"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/recipe"
)

// Option configures a Mutex or a ReadWriteLock. Bad options (a nil
// function, an unknown policy) make the constructor fail with an error
// wrapping curator.ErrInvalidArgument.
type Option func(*options)

type options struct {
	recipe.Options
	onRevoke func(held context.Context)
}

// WithData sets the data stored in our contender nodes (default: the
// client's default data, this host's address as Curator writes it).
func WithData(data []byte) Option { return func(o *options) { o.SetData(data) } }

// WithSuspendPolicy sets when a held lock counts as lost (default
// curator.LoseOnSuspend).
func WithSuspendPolicy(p curator.SuspendPolicy) Option { return func(o *options) { o.SetPolicy(p) } }

// WithOnEnqueue makes every acquisition call fn with the path of its
// contender node as soon as the node is made, before it waits (a waiter is
// visible while it waits: to log it, to show a queue, to revoke or delete
// it). fn runs on the acquiring goroutine and should return quickly. The
// node may still be deleted without being held (ctx done, TryLock failed).
// Default: none.
func WithOnEnqueue(fn func(node string)) Option { return func(o *options) { o.SetOnEnqueue(fn) } }

// WithRevocation makes the lock revocable (Curator's makeRevocable): while
// it is held, a Revoke of our node calls fn (on a goroutine of its own)
// with the held context of the holding asked for, which should release
// it: Unlock(held) releases that holding and no later one, even if fn runs
// after it was released and the lock taken again (Unlock with another
// context would release whichever holding is current). Revocable nodes
// hold empty data, as in Curator. Default: not revocable.
func WithRevocation(fn func(held context.Context)) Option {
	return func(o *options) {
		if fn == nil {
			o.Fail("nil WithRevocation function")
		}
		o.onRevoke = fn
	}
}

func buildOptions(opts []Option) (options, error) {
	var o options
	if err := recipe.Apply(&o, opts); err != nil {
		return o, fmt.Errorf("locks: %w", err)
	}
	if o.onRevoke != nil {
		o.Data = []byte{}
	}
	return o, nil
}
