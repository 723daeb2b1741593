package semaphore

import (
	"context"
	"fmt"
	"sync"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
)

// Lease is one lease of a Semaphore (Curator's Lease): return it with
// Release. Like a locks.Mutex holding, it has a held context (Context),
// cancelled with cause curator.ErrLockLost when the lease is lost, a
// fencing token and guarded writes. Lost is closed if its session is lost
// (or suspended, per the semaphore's SuspendPolicy), or if Release finds its
// node gone; its node is then deleted in the background if the server has
// not removed it already, so a lost lease goes back to the others and no
// longer counts as ours (CURATOR-595).
type Lease struct {
	s    *Semaphore
	h    *driver.Hold
	mu   sync.Mutex
	done bool

	rec telemetry.Recipe   // the recipe it is recorded as (a lease, a semaphore mutex)
	tel *telemetry.Holding // nil when not recorded
}

// Node returns the lease's node path (apache/curator#799; Curator's
// getNodeName gives the bare name).
func (l *Lease) Node() string { return l.h.Node() }

// Data reads the lease node's data (Curator's getData).
func (l *Lease) Data(ctx context.Context) ([]byte, error) {
	d, _, err := l.s.client.Get(ctx, l.h.Node())
	return d, err
}

// Lost returns a channel closed when the lease is lost.
func (l *Lease) Lost() <-chan struct{} { return l.h.Lost() }

// Context returns the held context: it carries the acquiring context's
// values and is cancelled when the lease is lost (cause
// curator.ErrLockLost) or released.
func (l *Lease) Context() context.Context { return l.h.Context() }

// FencingToken returns the creation zxid of the lease node: it strictly
// increases from one lease to the next, so a resource can reject a holder
// older than the newest it has seen (see locks.Mutex.FencingToken).
func (l *Lease) FencingToken(ctx context.Context) (int64, error) {
	if err := l.check(); err != nil {
		return 0, err
	}
	return l.h.FencingToken(ctx)
}

// GuardedMulti runs ops as one transaction that succeeds only while the
// lease node exists; if it is gone the error wraps curator.ErrLockLost and
// nothing was written (see locks.Mutex.GuardedMulti).
func (l *Lease) GuardedMulti(ctx context.Context, ops ...framework.Op) ([]framework.OpResult, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	return l.h.GuardedMulti(ctx, ops)
}

// check says whether the lease is still ours to use.
func (l *Lease) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return l.errReturned()
	}
	return nil
}

// errReturned is the error of a use of a lease returned already: it wraps
// curator.ErrNotHeld.
func (l *Lease) errReturned() error {
	return fmt.Errorf("semaphore: lease %s already returned: %w", l.h.Node(), curator.ErrNotHeld)
}

// Release returns the lease (Curator's Lease.close): a guaranteed delete of
// exactly its node. Its error follows the module's release rule (package
// curator, "Releasing"): nil once returned, even if the delete goes on in
// the background; curator.ErrNotHeld if returned already; an error wrapping
// curator.ErrLockLost if the lease had been lost, or its node was gone when
// released (its session expired before the client noticed, or someone
// deleted it), and Lost is closed then.
func (l *Lease) Release(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return l.errReturned()
	}
	l.done = true
	l.mu.Unlock()
	rctx, rel := l.rec.StartRelease(ctx)
	err := l.h.Release(rctx)
	rel.End(err)
	l.tel.Released(telemetry.ReleaseReleased) // a loss found by the release was recorded as such
	if err != nil {
		return fmt.Errorf("semaphore: release: %w", err)
	}
	return nil
}
