package semaphore

import (
	"context"
	"fmt"
	"sync"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
)

// Mutex is Curator's InterProcessSemaphoreMutex: a mutex on a one-lease
// Semaphore (the same nodes, so Curator's semaphore mutexes and this one
// exclude each other). It is not reentrant, as in Curator: a Lock on an
// instance that holds it blocks until some goroutine calls Unlock, like
// sync.Mutex (so a goroutine that locks twice deadlocks itself, until its
// ctx ends), and any goroutine may Unlock. Goroutines sharing one instance
// wait for it in the process; only one of them at a time is in ZooKeeper's
// queue. It satisfies curator.Locker, so a MultiLock can take it.
type Mutex struct {
	s   *Semaphore
	sem chan struct{}

	mu    sync.Mutex
	lease *Lease
}

var _ curator.Locker = (*Mutex)(nil)

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
	_, err := m.lock(ctx, false)
	return err
}

// TryLock takes the mutex if it is free now, else returns an error wrapping
// curator.ErrLocked.
func (m *Mutex) TryLock(ctx context.Context) error {
	_, err := m.lock(ctx, true)
	return err
}

// Acquire is Lock that also returns the held context (as locks.Mutex's
// Acquire): it carries ctx's values and is cancelled when the mutex is lost
// (cause curator.ErrLockLost) or released. It does not re-enter: the mutex
// is not reentrant. ctx bounds only the wait.
func (m *Mutex) Acquire(ctx context.Context) (context.Context, error) {
	l, err := m.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	return l.Context(), nil
}

func (m *Mutex) lock(ctx context.Context, try bool) (*Lease, error) {
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	// The acquisition the telemetry times includes the wait in the process.
	rec := m.s.recipe(telemetry.KindSemaphoreMutex)
	ctx, acq := rec.StartAcquire(ctx)
	l, err := m.take(ctx, try)
	acq.End(err)
	if err != nil {
		return nil, err
	}
	holdings([]*Lease{l}, rec)
	m.mu.Lock()
	m.lease = l // once complete: any goroutine may Unlock it from here on
	m.mu.Unlock()
	return l, nil
}

// take is lock's acquisition: the instance's turn, then the lease (not
// published yet).
func (m *Mutex) take(ctx context.Context, try bool) (*Lease, error) {
	if try {
		select {
		case m.sem <- struct{}{}:
		default:
			return nil, fmt.Errorf("semaphore mutex %s: %w", m.s.path, curator.ErrLocked)
		}
	} else {
		select {
		case m.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("semaphore mutex %s: %w", m.s.path, ctx.Err())
		}
	}
	leases, err := m.s.acquire(ctx, 1, try)
	if err != nil {
		<-m.sem
		return nil, err
	}
	return leases[0], nil
}

// Unlock releases the mutex (Curator's release). It is released locally
// first (CURATOR-376), whatever the delete's outcome; its error follows the
// module's release rule (package curator, "Releasing"): curator.ErrNotHeld
// if not held (Curator's IllegalStateException "Not acquired"),
// curator.ErrLockLost if it had been lost, else nil once released.
func (m *Mutex) Unlock(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	m.mu.Lock()
	l := m.lease
	m.lease = nil
	m.mu.Unlock()
	if l == nil {
		return fmt.Errorf("semaphore mutex %s: %w", m.s.path, curator.ErrNotHeld)
	}
	err := l.Release(ctx)
	<-m.sem
	return err
}

func (m *Mutex) current() *Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease
}

// held returns the lease while held, else an error wrapping
// curator.ErrNotHeld.
func (m *Mutex) held() (*Lease, error) {
	if l := m.current(); l != nil {
		return l, nil
	}
	return nil, fmt.Errorf("semaphore mutex %s: %w", m.s.path, curator.ErrNotHeld)
}

// IsAcquiredInThisProcess reports whether this instance holds the mutex.
func (m *Mutex) IsAcquiredInThisProcess() bool { return m.current() != nil }

// Lost returns a channel closed when the mutex held now is lost (closed at
// once when not held).
func (m *Mutex) Lost() <-chan struct{} {
	if l := m.current(); l != nil {
		return l.Lost()
	}
	return recipe.ClosedChan
}

// Node returns the lease node while held, else "".
func (m *Mutex) Node() string {
	if l := m.current(); l != nil {
		return l.Node()
	}
	return ""
}

// FencingToken returns, while held, the creation zxid of the lease node
// (see locks.Mutex.FencingToken); an error wrapping curator.ErrNotHeld if
// not held.
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

// Path returns the mutex's path.
func (m *Mutex) Path() string { return m.s.path }
