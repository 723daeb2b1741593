package semaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/recipes/locks"
)

// Mutex is Curator's InterProcessSemaphoreMutex: a mutex on a one-lease
// Semaphore (the same nodes, so Curator's semaphore mutexes and this one
// exclude each other). It is not reentrant, as in Curator: a Lock on an
// instance that holds it blocks until some goroutine calls Unlock, like
// sync.Mutex (so a goroutine that locks twice deadlocks itself, until its
// ctx ends), and any goroutine may Unlock. Goroutines sharing one instance
// wait for it in the process; only one of them at a time is in ZooKeeper's
// queue. It satisfies locks.Locker, so a MultiLock can take it.
type Mutex struct {
	s   *Semaphore
	sem chan struct{}

	mu    sync.Mutex
	lease *Lease
}

var _ locks.Locker = (*Mutex)(nil)

// NewMutex returns a semaphore mutex on path
// (InterProcessSemaphoreMutex(client, path)). Options are the Semaphore's.
func NewMutex(client *framework.Client, path string, opts ...Option) (*Mutex, error) {
	s, err := New(client, path, 1, opts...)
	if err != nil {
		return nil, err
	}
	return &Mutex{s: s, sem: make(chan struct{}, 1)}, nil
}

// Lock blocks until the mutex is held or ctx is done (its lease node is
// then deleted before Lock returns ctx's error, wrapped).
func (m *Mutex) Lock(ctx context.Context) error {
	_, err := m.lock(ctx)
	return err
}

func (m *Mutex) lock(ctx context.Context) (*Lease, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	select {
	case m.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l, err := m.s.Acquire(ctx)
	if err := m.took(l, err); err != nil {
		return nil, err
	}
	return l, nil
}

// Acquire is Lock that also returns the held context (as locks.Mutex's
// Acquire): it carries ctx's values and is cancelled when the mutex is lost
// (cause locks.ErrLockLost) or released. It does not re-enter: the mutex is
// not reentrant. ctx bounds only the wait.
func (m *Mutex) Acquire(ctx context.Context) (context.Context, error) {
	l, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	return l.Context(), nil
}

// TryLock takes the mutex if it is free now, else returns an error wrapping
// locks.ErrLocked.
func (m *Mutex) TryLock(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	select {
	case m.sem <- struct{}{}:
	default:
		return locks.ErrLocked
	}
	l, err := m.s.TryAcquire(ctx)
	if errors.Is(err, ErrNoLease) {
		err = fmt.Errorf("%w: %w", locks.ErrLocked, err)
	}
	return m.took(l, err)
}

func (m *Mutex) took(l *Lease, err error) error {
	if err != nil {
		<-m.sem
		return err
	}
	m.mu.Lock()
	m.lease = l
	m.mu.Unlock()
	return nil
}

// Unlock releases the mutex; an error wrapping locks.ErrNotHeld if it is
// not held (Curator's IllegalStateException "Not acquired"). The mutex is
// released locally first (CURATOR-376), whatever the delete's outcome; the
// errors are those of Lease.Release (locks.ErrLockLost if it had been lost,
// framework.ErrDeletePending if its node goes in the background).
func (m *Mutex) Unlock(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	m.mu.Lock()
	l := m.lease
	m.lease = nil
	m.mu.Unlock()
	if l == nil {
		return fmt.Errorf("semaphore mutex %s: %w", m.s.path, ErrNotHeld)
	}
	err := l.Release(ctx)
	<-m.sem
	return err
}

// IsAcquiredInThisProcess reports whether this instance holds the mutex.
func (m *Mutex) IsAcquiredInThisProcess() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease != nil
}

// Lost returns a channel closed when the mutex held now is lost (closed at
// once when not held).
func (m *Mutex) Lost() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil {
		return recipe.ClosedChan
	}
	return m.lease.Lost()
}

// Node returns the lease node while held, else "".
func (m *Mutex) Node() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil {
		return ""
	}
	return m.lease.Node()
}

// FencingToken returns, while held, the creation zxid of the lease node
// (see locks.Mutex.FencingToken); an error wrapping locks.ErrNotHeld if not
// held.
func (m *Mutex) FencingToken(ctx context.Context) (int64, error) {
	l, err := m.held()
	if err != nil {
		return 0, err
	}
	return l.FencingToken(ctx)
}

// GuardedMulti runs ops as one transaction that succeeds only while the
// mutex is held (see locks.Mutex.GuardedMulti).
func (m *Mutex) GuardedMulti(ctx context.Context, ops ...framework.Op) ([]framework.OpResult, error) {
	l, err := m.held()
	if err != nil {
		return nil, err
	}
	return l.GuardedMulti(ctx, ops...)
}

func (m *Mutex) held() (*Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == nil {
		return nil, fmt.Errorf("%w: %w: %s", locks.ErrNotHeld, ErrNotHeld, m.s.path)
	}
	return m.lease, nil
}

// Path returns the mutex's path.
func (m *Mutex) Path() string { return m.s.path }
