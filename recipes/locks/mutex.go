package locks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Locker is what every lock of this module satisfies (Curator's
// InterProcessLock): Mutex, both halves of ReadWriteLock, the semaphore
// package's SemaphoreMutex, and MultiLock.
type Locker interface {
	// Lock blocks until the lock is held or ctx is done.
	Lock(ctx context.Context) error
	// Unlock releases the lock; ErrNotHeld if it is not held.
	Unlock(ctx context.Context) error
	// IsAcquiredInThisProcess reports whether this instance holds the lock.
	IsAcquiredInThisProcess() bool
	// Lost returns a channel closed when the lock held now is lost (closed
	// at once when not held).
	Lost() <-chan struct{}
}

// Mutex is a distributed mutual-exclusion lock: Curator's InterProcessMutex.
//
// Goroutines sharing one Mutex exclude each other exactly as separate
// processes do: a Lock while another goroutine holds it blocks. Reentrancy
// (Curator's is per thread, and Go has no thread identity) is explicit: Do
// hands its function a context, and Lock or Do called with that context
// (or one derived from it) re-enters, counted as in Curator (n acquisitions
// need n releases).
//
// A held lock can be lost (its session expires, or with the default
// LoseOnSuspend policy its connection is suspended): Lost is closed then,
// and the context Do hands out is cancelled. FencingToken returns a number
// that strictly increases from one holder to the next, for resources that
// must reject a stale holder; GuardedMulti makes ZooKeeper writes that
// succeed only while the lock is held.
type Mutex struct {
	d    *Driver
	opts options
	// queue: one goroutine of the instance in ZooKeeper's queue (waiting
	// or holding) at a time; slot: one hold at a time. A downgrade takes
	// only the slot, so it never waits behind a goroutine of the same
	// ReadWriteLock that is queued for the read lock; that goroutine, once
	// its turn comes, waits for the slot (issue 14).
	queue chan struct{}
	slot  chan struct{}
	rw    *ReadWriteLock // set for the halves of a ReadWriteLock

	mu     sync.Mutex
	h      *hold
	queued bool  // h took the queue (not a downgrade)
	from   *hold // the write hold h was downgraded from, if any
}

// NewMutex returns a mutex on path (InterProcessMutex(client, path)).
// Contender nodes are "<path>/_c_<uuid>-lock-<seq>", as Curator's.
func NewMutex(client *framework.Client, path string, opts ...Option) (*Mutex, error) {
	d, err := NewDriver(client, path, "lock-", MaxLeases(1))
	if err != nil {
		return nil, err
	}
	return newMutex(d, buildOptions(opts)), nil
}

func newMutex(d *Driver, o options) *Mutex {
	return &Mutex{d: d, opts: o, queue: make(chan struct{}, 1), slot: make(chan struct{}, 1)}
}

type holdKey struct{ m *Mutex }

// heldBy returns the current hold if ctx was handed out by it.
func (m *Mutex) heldBy(ctx context.Context) *hold {
	h, _ := ctx.Value(holdKey{m}).(*hold)
	if h == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == h {
		return h
	}
	return nil
}

// reentry counts one more acquisition if ctx was handed out by the current
// hold (or downgrade is the write hold the current hold was downgraded
// from); a hold that was lost counts nothing and is ErrLockLost.
func (m *Mutex) reentry(ctx context.Context, downgrade *hold) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, _ := ctx.Value(holdKey{m}).(*hold)
	if h == nil || m.h != h {
		if downgrade == nil || m.h == nil || m.from != downgrade {
			return false, nil
		}
		h = m.h // a second downgrade through the same write hold
	}
	if h.isLost() {
		return true, fmt.Errorf("%w: %s", ErrLockLost, h.c.node)
	}
	h.count++
	return true, nil
}

// Lock blocks until the lock is held, ctx is done (ctx.Err() is returned and
// our node deleted), or the lock cannot be had (the client closed: an error
// wrapping framework.ErrClosed; our node vanished: ErrNodeVanished). It
// re-enters when ctx was handed out by Acquire or Do of this mutex; if that
// hold was lost meanwhile, it returns an error wrapping ErrLockLost and
// counts nothing (Unlock then releases the lost hold).
func (m *Mutex) Lock(ctx context.Context) error {
	_, err := m.lock(ctx, WaitOptions{})
	return err
}

// TryLock takes the lock if it is free now, else returns ErrLocked at once
// (Curator's acquire(0, unit)). ctx bounds the ZooKeeper calls.
func (m *Mutex) TryLock(ctx context.Context) error {
	_, err := m.lock(ctx, WaitOptions{Try: true})
	return err
}

// Acquire is Lock that also returns the held context: it carries ctx's
// values, is cancelled (with cause ErrLockLost) when the lock is lost or
// released, and re-enters this mutex when passed to Lock, Acquire or Do.
// Its deadline is not ctx's: ctx bounds only the wait.
func (m *Mutex) Acquire(ctx context.Context) (context.Context, error) {
	h, err := m.lock(ctx, WaitOptions{})
	if err != nil {
		return nil, err
	}
	return h.ctx, nil
}

func (m *Mutex) lock(ctx context.Context, wo WaitOptions) (*hold, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	var downgrade *hold
	if m.rw != nil {
		if m == m.rw.write && m.rw.read.heldBy(ctx) != nil {
			return nil, fmt.Errorf("%w: %s", ErrUpgrade, m.d.path)
		}
		if m == m.rw.read {
			downgrade = m.rw.write.heldBy(ctx)
		}
	}
	if ok, err := m.reentry(ctx, downgrade); ok {
		if err != nil {
			return nil, err
		}
		return m.current(), nil
	}
	wo.OnEnqueue = m.opts.onEnqueue
	if downgrade != nil {
		// The write holder reads: held at once, in the writer's place. It
		// needs no place in the instance's queue, only the hold slot (free
		// unless a hold of the read half outlived a write).
		if err := take(ctx, m.slot, wo.Try); err != nil {
			return nil, err
		}
		c, err := m.d.EnqueueAs(ctx, m.rw.downgradeName(downgrade), m.opts.data)
		if err != nil {
			<-m.slot
			return nil, err
		}
		if wo.OnEnqueue != nil {
			wo.OnEnqueue(c.node)
		}
		return m.held(ctx, c, false, downgrade), nil
	}
	if err := take(ctx, m.queue, wo.Try); err != nil {
		return nil, err
	}
	c, err := m.d.Acquire(ctx, m.opts.data, wo)
	if err == nil {
		// Ours in ZooKeeper; a downgraded hold of this read half may still
		// have the slot: wait for it, as for any holder of the instance.
		if err = take(ctx, m.slot, wo.Try); err != nil {
			c.deleteQuietly(ctx)
		}
	}
	if err != nil {
		<-m.queue
		return nil, err
	}
	return m.held(ctx, c, true, nil), nil
}

// take takes the place in ch (a one-place semaphore): at once if try (else
// ErrLocked), or waiting until ctx is done.
func take(ctx context.Context, ch chan struct{}, try bool) error {
	if try {
		select {
		case ch <- struct{}{}:
			return nil
		default:
			return ErrLocked
		}
	}
	select {
	case ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// held records a new hold of c.
func (m *Mutex) held(ctx context.Context, c *Contender, queued bool, from *hold) *hold {
	h := newHold(ctx, holdKey{m}, c, &m.opts)
	m.mu.Lock()
	m.h, m.queued, m.from = h, queued, from
	m.mu.Unlock()
	return h
}

// Unlock releases one acquisition; the last one deletes our node (only ours,
// guaranteed). ErrNotHeld if the mutex is not held. The lock is released
// locally even if the delete could not be confirmed: the error then wraps
// framework.ErrDeletePending and the delete goes on in the background. If
// the lock had been lost, or its node was found already gone (its session
// expired unnoticed, someone deleted it), Unlock releases it locally, says
// so with an error wrapping ErrLockLost and closes Lost's channel.
func (m *Mutex) Unlock(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	m.mu.Lock()
	h := m.h
	if h == nil {
		m.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotHeld, m.d.path)
	}
	h.count--
	if h.count > 0 {
		m.mu.Unlock()
		return nil
	}
	queued := m.queued
	m.h, m.queued, m.from = nil, false, nil
	m.mu.Unlock()
	err := h.release(ctx)
	<-m.slot
	if queued {
		<-m.queue
	}
	return err
}

// Do runs fn while holding the lock and releases it after. The context fn
// receives is cancelled if the lock is lost, and re-enters this mutex (Lock,
// Do) without blocking. If the lock was lost while fn ran, Do returns an
// error wrapping ErrLockLost (joined with fn's error).
func (m *Mutex) Do(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	if fn == nil {
		return fmt.Errorf("%w: nil function", ErrInvalidArgument)
	}
	h, err := m.lock(ctx, WaitOptions{})
	if err != nil {
		return err
	}
	defer func() {
		// Release even if ctx is done, but never wait longer than a clean-up
		// may: past that the delete goes on in the background.
		uctx, cancel := recipe.CleanupContext(ctx)
		defer cancel()
		// A loss found only by the release (the node was gone) is news.
		uerr := m.Unlock(uctx)
		if uerr != nil && !errors.Is(uerr, framework.ErrDeletePending) && !(errors.Is(uerr, ErrLockLost) && errors.Is(err, ErrLockLost)) {
			err = errors.Join(err, uerr)
		}
	}()
	return runHeld(ctx, holdKey{m}, h, fn)
}

// runHeld runs fn with a context that carries the hold (for reentrancy) and
// is cancelled when the hold is lost, as well as when ctx is.
func runHeld(ctx context.Context, key any, h *hold, fn func(context.Context) error) error {
	fctx, cancel := context.WithCancelCause(context.WithValue(ctx, key, h))
	defer cancel(nil)
	stop := context.AfterFunc(h.ctx, func() { cancel(context.Cause(h.ctx)) })
	defer stop()
	err := fn(fctx)
	if h.isLost() {
		err = errors.Join(fmt.Errorf("%w: %s", ErrLockLost, h.c.node), err)
	}
	return err
}

func (m *Mutex) current() *hold {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.h
}

// IsAcquiredInThisProcess reports whether this instance holds the lock.
func (m *Mutex) IsAcquiredInThisProcess() bool { return m.current() != nil }

// Lost returns a channel closed when the lock held now is lost; when the
// mutex is not held, the channel is already closed.
func (m *Mutex) Lost() <-chan struct{} {
	if h := m.current(); h != nil {
		return h.lost
	}
	return recipe.ClosedChan
}

// Node returns the path of our lock node while held, else "" (Curator's getLockPath).
func (m *Mutex) Node() string {
	if h := m.current(); h != nil {
		return h.c.node
	}
	return ""
}

// Path returns the lock's path.
func (m *Mutex) Path() string { return m.d.path }

// FencingToken returns, while the lock is held, the creation zxid of our
// lock node: it strictly increases from one holder to the next (unlike the
// sequence number, which restarts when a reaped lock path is recreated), so
// a resource can reject any holder older than the newest it has seen.
func (m *Mutex) FencingToken(ctx context.Context) (int64, error) {
	h := m.current()
	if h == nil {
		return 0, ErrNotHeld
	}
	return h.fencingToken(ctx)
}

// GuardedMulti runs ops as one transaction that succeeds only while we hold
// the lock (it checks our lock node, as etcd's IsOwner guard does). If the
// lock is gone the error wraps ErrLockLost and nothing was written.
func (m *Mutex) GuardedMulti(ctx context.Context, ops ...framework.Op) ([]framework.OpResult, error) {
	h := m.current()
	if h == nil {
		return nil, ErrNotHeld
	}
	return h.guardedMulti(ctx, ops)
}

// Participants returns the full paths of every contender, holder first
// (Curator's getParticipantNodes). For a half of a ReadWriteLock, only that
// half's nodes are listed (readers for Read(), writers for Write()), as
// Curator's InterProcessReadWriteLock does; both keep queue order.
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	parts, err := m.d.Participants(ctx)
	if err != nil || m.rw == nil {
		return parts, err
	}
	return slices.DeleteFunc(parts, func(p string) bool {
		return !strings.Contains(framework.NodeName(p), m.d.name)
	}), nil
}
