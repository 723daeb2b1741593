package semaphore

import (
	"fmt"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/recipe"
)

// Option configures a Semaphore or a Mutex. Bad options (a nil function, an
// unknown policy) make the constructor fail with an error wrapping
// curator.ErrInvalidArgument.
type Option func(*options)

type options struct{ recipe.Options }

// WithData sets the data stored in lease nodes (default: the client's
// default data, this host's address as Curator writes it).
func WithData(data []byte) Option { return func(o *options) { o.SetData(data) } }

// WithSuspendPolicy sets when a held lease counts as lost (default
// curator.LoseOnSuspend).
func WithSuspendPolicy(p curator.SuspendPolicy) Option { return func(o *options) { o.SetPolicy(p) } }

// WithOnEnqueue makes every acquisition call fn with the path of each
// lease node it makes, as soon as it is made, before the wait for the
// lease (a waiter is visible while it waits). As in Curator, an acquirer
// keeps a lease node only once it holds the semaphore's internal lock
// ("<path>/locks"); before that it waits in that lock's queue. (A waiter
// next in that queue starts its lease create as its predecessor goes, and
// fn is called for that node once the lock is found held; a node so made
// for an acquirer that turns out not to hold the lock is deleted at once,
// and fn is not called for it.) fn runs on the acquiring goroutine and should return quickly;
// the node may still be deleted without being granted (ctx done, TryAcquire
// failed), and an acquire that starts over calls fn for its new node.
// Default: none.
func WithOnEnqueue(fn func(node string)) Option { return func(o *options) { o.SetOnEnqueue(fn) } }

func buildOptions(opts []Option) (options, error) {
	var o options
	if err := recipe.Apply(&o, opts); err != nil {
		return o, fmt.Errorf("semaphore: %w", err)
	}
	return o, nil
}
