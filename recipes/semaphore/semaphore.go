package semaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
)

// Semaphore is Curator's InterProcessSemaphoreV2: at most a maximum number of
// leases held at once across every process using the same path. The maximum
// is fixed (New) or read from a SharedCount (NewWithSharedCount); as in
// Curator, processes are not checked to agree on it. Safe for concurrent use.
type Semaphore struct {
	client *framework.Client
	path   string
	lock   *locks.Mutex
	leases *locks.Driver
	max    func() int
	wake   func() <-chan struct{}
	opts   options
}

type options struct {
	data   []byte
	policy locks.SuspendPolicy
}

// Option configures a Semaphore or a Mutex.
type Option func(*options)

// WithData sets the data stored in lease nodes (default: the client's
// default data, this host's IP as in Curator).
func WithData(data []byte) Option { return func(o *options) { o.data = append([]byte{}, data...) } }

// WithSuspendPolicy sets when a held lease counts as lost (default
// locks.LoseOnSuspend; see locks.SuspendPolicy).
func WithSuspendPolicy(p locks.SuspendPolicy) Option { return func(o *options) { o.policy = p } }

// New returns a semaphore on path allowing maxLeases leases at once.
func New(client *framework.Client, path string, maxLeases int, opts ...Option) (*Semaphore, error) {
	if maxLeases < 1 {
		return nil, fmt.Errorf("%w: max leases %d must be at least 1", ErrInvalidArgument, maxLeases)
	}
	return newSemaphore(client, path, func() int { return maxLeases }, nil, opts)
}

// NewWithSharedCount returns a semaphore whose maximum is the value of a
// started SharedCount: acquirers waiting for a lease notice when it rises.
func NewWithSharedCount(client *framework.Client, path string, count *SharedCount, opts ...Option) (*Semaphore, error) {
	if count == nil {
		return nil, fmt.Errorf("%w: nil shared count", ErrInvalidArgument)
	}
	return newSemaphore(client, path, count.Count, count.Changed, opts)
}

func newSemaphore(client *framework.Client, path string, max func() int, wake func() <-chan struct{}, opts []Option) (*Semaphore, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil || path == "/" {
		return nil, fmt.Errorf("%w: path %q: %v", ErrInvalidArgument, path, err)
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	s := &Semaphore{client: client, path: path, max: max, wake: wake, opts: o}
	var err error
	if s.lock, err = locks.NewMutex(client, framework.JoinPath(path, "locks")); err != nil {
		return nil, err
	}
	// Curator's rule: granted while the lease nodes number at most the maximum.
	grant := func(contenders []string, _ int) (locks.Decision, error) {
		if len(contenders) <= s.max() {
			return locks.Decision{Held: true}, nil
		}
		return locks.Decision{}, nil // wait for any change among the leases
	}
	if s.leases, err = locks.NewDriver(client, framework.JoinPath(path, "leases"), "lease-", grant); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the semaphore's path.
func (s *Semaphore) Path() string { return s.path }

// Acquire blocks until a lease is granted or ctx is done (the half-made
// lease node is then deleted before Acquire returns).
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	leases, err := s.AcquireN(ctx, 1)
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// TryAcquire takes a lease only if one is free now; else ErrNoLease.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) {
	leases, err := s.acquire(ctx, 1, true)
	if errors.Is(err, locks.ErrLocked) {
		return nil, fmt.Errorf("%w: %s", ErrNoLease, s.path)
	}
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// AcquireN acquires n leases, all or none, within one ctx deadline. Unlike
// Curator's acquire(qty), which takes the leases one at a time and so can
// deadlock when acquirers each hold part of what they want, the n lease
// nodes are made under one hold of the internal lock and granted together:
// acquirers never wait holding part of a set. n above a fixed maximum can
// never be granted and is an error.
func (s *Semaphore) AcquireN(ctx context.Context, n int) ([]*Lease, error) {
	return s.acquire(ctx, n, false)
}

const cleanupTimeout = 5 * time.Second

// cleanupContext is for clean-ups after a failure: not ended by the caller's
// context, but bounded (past it guaranteed deletes go on in the background).
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// acquire is Curator's internalAcquire1Lease for n leases at once: under the
// internal mutex, create the lease nodes and wait until the leases number at
// most the maximum; on any failure delete every node made (CURATOR-335/462).
func (s *Semaphore) acquire(ctx context.Context, n int, try bool) (leases []*Lease, err error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: lease count %d must be at least 1", ErrInvalidArgument, n)
	}
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	if s.wake == nil && n > s.max() {
		return nil, fmt.Errorf("%w: %d leases asked of a semaphore of %d", ErrInvalidArgument, n, s.max())
	}
	var hctx context.Context
	if try {
		if err = s.lock.TryLock(ctx); err != nil {
			return nil, err
		}
	} else if hctx, err = s.lock.Acquire(ctx); err != nil {
		return nil, err
	}
	defer func() {
		rctx, cancel := cleanupContext(ctx)
		defer cancel()
		if uerr := s.lock.Unlock(rctx); uerr != nil && !errors.Is(uerr, framework.ErrDeletePending) {
			s.client.Logger().Warn("releasing the semaphore's internal lock", "path", s.path, "err", uerr)
		}
	}()
	// Wait only while the internal lock holds, and no longer than ctx.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if hctx != nil {
		stop := context.AfterFunc(hctx, cancel)
		defer stop()
	}
	var made []*locks.Contender
	fail := func(err error) ([]*Lease, error) {
		rctx, cancel := cleanupContext(ctx)
		defer cancel()
		for _, c := range made {
			c.Delete(rctx) // guaranteed: never an orphan lease (CURATOR-335/462)
		}
		if ctx.Err() == nil && wctx.Err() != nil {
			err = fmt.Errorf("%w: internal lock of %s: %w", locks.ErrLockLost, s.path, err)
		}
		return nil, err
	}
	for len(made) < n {
		c, err := s.leases.Enqueue(wctx, s.opts.data)
		if err != nil {
			return fail(err)
		}
		made = append(made, c)
	}
	// The count rule on our last node covers all of ours.
	if err := made[n-1].Wait(wctx, locks.WaitOptions{Try: try, Wake: s.wake}); err != nil {
		return fail(err)
	}
	leases = make([]*Lease, n)
	for i, c := range made {
		leases[i] = newLease(s, c)
	}
	return leases, nil
}

// Return gives a lease back (the same as l.Release).
func (s *Semaphore) Return(ctx context.Context, l *Lease) error {
	if l == nil {
		return fmt.Errorf("%w: nil lease", ErrInvalidArgument)
	}
	if l.s != s {
		return fmt.Errorf("%w: %s is not of %s", ErrForeignLease, l.Node(), s.path)
	}
	return l.Release(ctx)
}

// ReturnAll gives back every lease, trying each, and returns the failures joined.
func (s *Semaphore) ReturnAll(ctx context.Context, leases []*Lease) error {
	var errs []error
	for _, l := range leases {
		if err := s.Return(ctx, l); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Participants returns the paths of the lease nodes, in grant order
// (Curator's getParticipantNodes).
func (s *Semaphore) Participants(ctx context.Context) ([]string, error) {
	return s.leases.Participants(ctx)
}

// Lease is one lease of a Semaphore (Curator's Lease): return it with
// Release. Lost is closed if its session is lost (or suspended, per policy):
// the server returns it to the others then, so it no longer counts as ours
// (CURATOR-595).
type Lease struct {
	s    *Semaphore
	c    *locks.Contender
	mon  *locks.Monitor
	done bool
	mu   sync.Mutex
}

func newLease(s *Semaphore, c *locks.Contender) *Lease {
	return &Lease{s: s, c: c, mon: c.Monitor(s.opts.policy, nil)}
}

// Node returns the lease's node path (apache/curator#799).
func (l *Lease) Node() string { return l.c.Node() }

// Data reads the lease node's data.
func (l *Lease) Data(ctx context.Context) ([]byte, error) {
	d, _, err := l.s.client.Get(ctx, l.c.Node())
	return d, err
}

// Lost returns a channel closed when the lease is lost.
func (l *Lease) Lost() <-chan struct{} { return l.mon.Lost() }

// Release returns the lease: a guaranteed delete of exactly its node.
// Releasing twice is ErrNotHeld. A *framework.DeletePendingError means the
// lease is returned locally and its node goes in the background; an error
// wrapping locks.ErrLockLost, that the lease had been lost already.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return fmt.Errorf("%w: lease %s already returned", ErrNotHeld, l.c.Node())
	}
	l.done = true
	l.mu.Unlock()
	l.mon.Stop()
	if l.mon.IsLost() { // its node is already being deleted; say what happened
		return fmt.Errorf("%w: lease %s (returned locally)", locks.ErrLockLost, l.c.Node())
	}
	return l.c.Delete(ctx)
}
