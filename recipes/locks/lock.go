package locks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
)

// lock is what Mutex and both halves of ReadWriteLock share: a driver,
// holdings that re-enter through their held context, and at most one
// holding of the instance at a time. How a holding is taken is each type's
// own (take); their methods are all here, once.
type lock struct {
	d    *driver.Driver
	opts options
	self taker // the type's own acquisition
	turn token // one goroutine of the instance in ZooKeeper's queue at a time
	tel  telemetry.Recipe

	mu sync.Mutex
	h  *holding
}

// holding is one holding of a lock instance: the engine's hold, how many
// acquisitions it counts, and what its release gives back to the instance.
type holding struct {
	*driver.Hold
	count    int
	giveBack func()
	tel      *telemetry.Holding // nil when not recorded
	// via is the released holding whose held context this one was taken
	// with (one that outlived it, context.WithoutCancel): Unlock with that
	// context releases this one, as Lock with it took it (l.mu).
	via *holding
}

// taker is how each type takes a holding that ctx does not re-enter (an
// interface, not a func value: one frame less on the stack of every parked
// waiter).
type taker interface {
	take(ctx context.Context, try bool) (*holding, error)
}

// heldKey is the context key under which a held context carries its
// holding, for reentrancy.
type heldKey struct{ l *lock }

func (l *lock) init(d *driver.Driver, o options, self taker, kind telemetry.Kind) {
	l.d, l.opts, l.self, l.turn = d, o, self, make(token, 1)
	l.tel = telemetry.ForClient(d.Client()).Recipe(kind, d.Path())
}

// carried returns the holding whose held context ctx is (or is made
// from), current or not; nil if none of this lock's.
func (l *lock) carried(ctx context.Context) *holding {
	h, _ := ctx.Value(heldKey{l}).(*holding)
	return h
}

// heldBy returns the current holding if ctx was handed out by it.
func (l *lock) heldBy(ctx context.Context) *holding {
	h := l.carried(ctx)
	if h == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != h {
		return nil
	}
	return h
}

// reenter counts one more acquisition if ctx was handed out by the current
// holding: (h, nil). A holding that was lost counts nothing: (nil, error
// wrapping curator.ErrLockLost). (nil, nil): ctx holds nothing of ours.
func (l *lock) reenter(ctx context.Context) (*holding, error) {
	h := l.carried(ctx)
	if h == nil {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != h {
		return nil, nil
	}
	return countLocked(h)
}

// countLocked counts one more acquisition of h (l.mu held), unless h was
// lost.
func countLocked(h *holding) (*holding, error) {
	if h.IsLost() {
		return nil, h.LostErr()
	}
	h.count++
	return h, nil
}

// queued takes a holding through ZooKeeper's queue: the instance's turn,
// our node, the wait, then gate (if any, a token the holding keeps). The
// whole of it is the acquisition the telemetry times.
func (l *lock) queued(ctx context.Context, try bool, gate token) (*holding, error) {
	ctx, acq := l.tel.StartAcquire(ctx)
	if err := l.turn.take(ctx, try, l.d.Path()); err != nil {
		acq.End(err)
		return nil, err
	}
	c, err := l.d.Acquire(ctx, l.opts.Data, &driver.WaitOptions{Try: try, OnEnqueue: acq.OnEnqueue(l.opts.OnEnqueue)})
	if err == nil {
		if err = gate.take(ctx, try, l.d.Path()); err != nil {
			c.DeleteQuietly(ctx)
		}
	}
	acq.End(err)
	if err != nil {
		l.turn.give()
		return nil, err
	}
	return l.install(telemetry.Outer(ctx), c, 0, func() { gate.give(); l.turn.give() }), nil
}

// install records a new holding of c, with its fencing token if known (0:
// read when first asked); giveBack runs once it is released.
func (l *lock) install(ctx context.Context, c *driver.Contender, token int64, giveBack func()) *holding {
	h := &holding{count: 1, giveBack: giveBack}
	h.Hold = c.Hold(context.WithValue(ctx, heldKey{l}, h), driver.HoldOptions{Policy: l.opts.Policy, OnRevoke: l.opts.onRevoke, Token: token})
	h.tel = h.RecordHolding(l.tel)
	l.mu.Lock()
	l.h = h
	l.mu.Unlock()
	return h
}

func (l *lock) acquire(ctx context.Context, try bool) (*holding, error) {
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	h, err := l.reenter(ctx)
	if h == nil && err == nil {
		h, err = l.self.take(ctx, try)
		if stale := l.carried(ctx); err == nil && stale != nil && stale != h {
			l.mu.Lock()
			h.via = stale
			l.mu.Unlock()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("locks: %w", err)
	}
	return h, nil
}

// Lock blocks until the lock is held, ctx is done (ctx.Err() is returned and
// our node deleted), or the lock cannot be had (the client closed: an error
// wrapping curator.ErrClosed; our node vanished: curator.ErrNodeVanished).
// It re-enters when ctx was handed out by Acquire or Do of this lock; if
// that holding was lost meanwhile, it returns an error wrapping
// curator.ErrLockLost and counts nothing (Unlock then releases the lost
// holding).
func (l *lock) Lock(ctx context.Context) error {
	_, err := l.acquire(ctx, false)
	return err
}

// TryLock takes the lock if it is free now, else returns an error wrapping
// curator.ErrLocked at once (Curator's acquire(0, unit)). ctx bounds the
// ZooKeeper calls.
func (l *lock) TryLock(ctx context.Context) error {
	_, err := l.acquire(ctx, true)
	return err
}

// Acquire is Lock that also returns the held context: it carries ctx's
// values, is cancelled (with cause curator.ErrLockLost) when the lock is
// lost or released, and re-enters this lock when passed to Lock, Acquire or
// Do. Its deadline is not ctx's: ctx bounds only the wait.
func (l *lock) Acquire(ctx context.Context) (context.Context, error) {
	h, err := l.acquire(ctx, false)
	if err != nil {
		return nil, err
	}
	return h.Context(), nil
}

// Unlock releases one acquisition; the last one deletes our node (only
// ours, guaranteed). With a held context (Acquire's, Do's, the revocation
// callback's) it releases that holding only: if that one is released
// already, it is curator.ErrNotHeld, whoever holds now (unless the current
// holding was taken with that same context, which then outlived its own:
// Lock and Unlock with one context pair up); with any other context, the
// current holding, as sync.Mutex does. Its error follows the
// module's release rule (package curator, "Releasing"): nil once
// released, even if the delete goes on in the background;
// curator.ErrNotHeld if not held; curator.ErrLockLost if the lock had been
// lost, or its node was found already gone (its session expired
// unnoticed, someone deleted it), and Lost is closed then; the server's
// error if it refused the delete. The lock is released locally in every
// case but misuse.
func (l *lock) Unlock(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	return l.release(ctx, l.carried(ctx))
}

// release releases one acquisition of held, or of the current holding if
// held is nil (Unlock).
func (l *lock) release(ctx context.Context, held *holding) error {
	l.mu.Lock()
	h := l.h
	if h == nil || (held != nil && held != h && held != h.via) {
		l.mu.Unlock()
		return fmt.Errorf("locks: %s: %w", l.d.Path(), curator.ErrNotHeld)
	}
	h.count--
	if h.count > 0 {
		l.mu.Unlock()
		return nil
	}
	l.h, h.via = nil, nil
	l.mu.Unlock()
	rctx, rel := l.tel.StartRelease(ctx)
	err := h.Release(rctx)
	rel.End(err)
	h.tel.Released(telemetry.ReleaseReleased) // a loss found by the release was recorded as such
	h.giveBack()
	if err != nil {
		return fmt.Errorf("locks: unlock: %w", err)
	}
	return nil
}

// Do runs fn while holding the lock and releases it after: that holding,
// never a later one. The context fn receives is cancelled if the lock is
// lost, and re-enters this lock (Lock, Do) without blocking. If the lock
// was lost while fn ran, Do returns an error wrapping curator.ErrLockLost
// (joined with fn's error); an error of the release is joined too
// (curator.ErrNotHeld if the holding was released before, by fn or by a
// revocation callback).
func (l *lock) Do(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	if fn == nil {
		return fmt.Errorf("locks: %w: nil function", curator.ErrInvalidArgument)
	}
	h, err := l.acquire(ctx, false)
	if err != nil {
		return err
	}
	defer func() {
		// Release even if ctx is done, but never wait longer than a clean-up
		// may: past that the delete goes on in the background.
		uctx, cancel := recipe.CleanupContext(ctx)
		defer cancel()
		// A loss found only by the release (the node was gone) is news; a
		// loss fn's error already reports is not.
		if uerr := l.release(uctx, h); uerr != nil && !(errors.Is(uerr, curator.ErrLockLost) && errors.Is(err, curator.ErrLockLost)) {
			err = errors.Join(err, uerr)
		}
	}()
	fctx, cancel := context.WithCancelCause(context.WithValue(ctx, heldKey{l}, h))
	defer cancel(nil)
	stop := context.AfterFunc(h.Context(), func() { cancel(context.Cause(h.Context())) })
	defer stop()
	err = fn(fctx)
	if h.IsLost() {
		err = errors.Join(h.LostErr(), err)
	}
	return err
}

func (l *lock) current() *holding {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h
}

// held returns the current holding, or an error wrapping curator.ErrNotHeld.
func (l *lock) held() (*holding, error) {
	if h := l.current(); h != nil {
		return h, nil
	}
	return nil, fmt.Errorf("locks: %s: %w", l.d.Path(), curator.ErrNotHeld)
}

// IsAcquiredInThisProcess reports whether this instance holds the lock.
func (l *lock) IsAcquiredInThisProcess() bool { return l.current() != nil }

// Lost returns a channel closed when the lock held now is lost; when the
// lock is not held, the channel is already closed.
func (l *lock) Lost() <-chan struct{} {
	if h := l.current(); h != nil {
		return h.Lost()
	}
	return recipe.ClosedChan
}

// Node returns the path of our lock node while held, else "" (Curator's
// getLockPath).
func (l *lock) Node() string {
	if h := l.current(); h != nil {
		return h.Node()
	}
	return ""
}

// Path returns the lock's path.
func (l *lock) Path() string { return l.d.Path() }

// FencingToken returns, while the lock is held, the creation zxid of our
// lock node (a downgraded read holding, in its writer's place, returns its
// writer's): it strictly increases from one holder to the next (unlike the
// sequence number, which restarts when a reaped lock path is recreated), so
// a resource can reject any holder older than the newest it has seen.
// Errors: curator.ErrNotHeld when not held, curator.ErrLockLost when lost.
func (l *lock) FencingToken(ctx context.Context) (int64, error) {
	h, err := l.held()
	if err != nil {
		return 0, err
	}
	return h.FencingToken(ctx)
}

// GuardedMulti runs ops as one transaction that succeeds only while we hold
// the lock (it checks our lock node, as etcd's IsOwner guard does). If the
// lock is gone the error wraps curator.ErrLockLost and nothing was
// written; curator.ErrNotHeld when not held.
func (l *lock) GuardedMulti(ctx context.Context, ops ...framework.Op) ([]framework.OpResult, error) {
	h, err := l.held()
	if err != nil {
		return nil, err
	}
	return h.GuardedMulti(ctx, ops)
}

// Participants returns the full paths of every contender of this lock,
// holder first (Curator's getParticipantNodes). Only nodes of this lock's
// own name are listed: a half of a ReadWriteLock lists its own nodes
// (readers for Read(), writers for Write()), as Curator does; both keep
// queue order.
func (l *lock) Participants(ctx context.Context) ([]string, error) {
	parts, err := l.d.Participants(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(parts, func(p string) bool {
		return !strings.Contains(framework.NodeName(p), l.d.Name())
	}), nil
}

// token is a one-place semaphore of an instance (its turn in ZooKeeper's
// queue, the read half's one holding). A nil token is always free.
type token chan struct{}

// take takes the token: at once if try (else curator.ErrLocked), or
// waiting until ctx is done.
func (t token) take(ctx context.Context, try bool, path string) error {
	if t == nil {
		return nil
	}
	if try {
		select {
		case t <- struct{}{}:
			return nil
		default:
			return fmt.Errorf("%s: %w", path, curator.ErrLocked)
		}
	}
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t token) give() {
	if t != nil {
		<-t
	}
}
