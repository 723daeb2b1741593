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

// Node names of Curator's layout.
const (
	locksChild  = "locks"
	leasesChild = "leases"
	leaseName   = "lease-"
)

// Semaphore is Curator's InterProcessSemaphoreV2: at most a maximum number of
// leases held at once across every process using the same path. The maximum
// is fixed (New) or read from a SharedCount (NewWithSharedCount); as in
// Curator, processes are not checked to agree on it. Safe for concurrent use:
// goroutines sharing one Semaphore contend exactly as separate processes do.
type Semaphore struct {
	client *framework.Client
	path   string
	leases string // <path>/leases
	lock   *locks.Mutex
	list   *locks.Driver // lists and sorts the lease nodes (Participants)
	max    func() int
	wake   func() <-chan struct{}
	opts   options
}

type options struct {
	data      []byte
	policy    locks.SuspendPolicy
	onEnqueue func(node string)
}

// Option configures a Semaphore or a Mutex.
type Option func(*options)

// WithData sets the data stored in lease nodes (default: the client's
// default data, this host's IP as in Curator).
func WithData(data []byte) Option { return func(o *options) { o.data = append([]byte{}, data...) } }

// WithSuspendPolicy sets when a held lease counts as lost (default
// locks.LoseOnSuspend; see locks.SuspendPolicy).
func WithSuspendPolicy(p locks.SuspendPolicy) Option { return func(o *options) { o.policy = p } }

// WithOnEnqueue makes every acquisition call fn with the path of each
// lease node it makes, as soon as it is made, before the wait for the
// lease (a waiter is visible while it waits). As in Curator, an acquirer
// makes its lease node once it holds the semaphore's internal lock
// ("<path>/locks"); before that it waits in that lock's queue and has no
// lease node. fn runs on the acquiring goroutine and should return quickly;
// the node may still be deleted without being granted (ctx done, TryAcquire
// failed), and an acquire that starts over calls fn for its new node.
func WithOnEnqueue(fn func(node string)) Option { return func(o *options) { o.onEnqueue = fn } }

// New returns a semaphore on path allowing maxLeases leases at once
// (InterProcessSemaphoreV2(client, path, maxLeases)).
func New(client *framework.Client, path string, maxLeases int, opts ...Option) (*Semaphore, error) {
	if maxLeases < 1 {
		return nil, fmt.Errorf("%w: max leases %d must be at least 1", ErrInvalidArgument, maxLeases)
	}
	return newSemaphore(client, path, func() int { return maxLeases }, nil, opts)
}

// NewWithSharedCount returns a semaphore whose maximum is the value of a
// SharedCount (InterProcessSemaphoreV2(client, path, SharedCountReader)).
// Start the count before acquiring: until then its value is 0 and nobody
// gets a lease. Acquirers waiting for a lease look again whenever the count
// changes, so a raised maximum lets them in at once; a lowered one holds new
// acquirers back until enough leases are returned (leases already granted
// are not taken back).
func NewWithSharedCount(client *framework.Client, path string, count *SharedCount, opts ...Option) (*Semaphore, error) {
	if count == nil {
		return nil, fmt.Errorf("%w: nil shared count", ErrInvalidArgument)
	}
	return newSemaphore(client, path, count.Count, count.Changed, opts)
}

func newSemaphore(client *framework.Client, path string, max func() int, wake func() <-chan struct{}, opts []Option) (*Semaphore, error) {
	if err := recipe.CheckArgs(client, "semaphore", path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	s := &Semaphore{client: client, path: path, leases: framework.JoinPath(path, leasesChild), max: max, wake: wake, opts: o}
	var err error
	// The internal lock only keeps acquirers from waiting side by side (two
	// waiting lease nodes could keep the count above the maximum for ever);
	// the count rule alone keeps the leases within the maximum. So a
	// suspended connection need not abort a waiting acquirer: only a lost
	// session does (its lease node is gone with it).
	if s.lock, err = locks.NewMutex(client, framework.JoinPath(path, locksChild), locks.WithSuspendPolicy(locks.LoseOnLost)); err != nil {
		return nil, err
	}
	if s.list, err = locks.NewDriver(client, s.leases, leaseName, locks.MaxLeases(1)); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the semaphore's path.
func (s *Semaphore) Path() string { return s.path }

// Acquire blocks until a lease is granted or ctx is done; on failure the
// lease node it made is deleted before it returns (Curator's acquire() and
// acquire(time, unit), the deadline being ctx's).
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	leases, err := s.acquire(ctx, 1, false)
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// TryAcquire takes a lease only if one is free now; else it returns an error
// wrapping ErrNoLease at once (Curator's acquire(0, unit)). As in Curator,
// "now" includes the internal lock: while another acquirer holds it (it is
// waiting for a lease, or about to get one), TryAcquire gets ErrNoLease.
// ctx bounds the ZooKeeper calls.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) {
	leases, err := s.acquire(ctx, 1, true)
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// AcquireN acquires n leases, all or none, within ctx (one deadline for all;
// Curator's acquire(qty[, time, unit])). n < 1 is ErrInvalidArgument, and so
// is n above a fixed maximum, which could never be granted. Unlike Curator's
// acquire(qty), which takes the leases one at a time and can deadlock when
// acquirers each hold part of what they want, the n lease nodes are made
// under one hold of the internal lock and granted together (the count rule
// on all of them): nobody ever waits holding part of a set. On failure every
// node made is deleted before AcquireN returns.
func (s *Semaphore) AcquireN(ctx context.Context, n int) ([]*Lease, error) {
	return s.acquire(ctx, n, false)
}

// maxVanished bounds how often an acquire starts over because a lease node
// of ours was deleted by someone else while it waited (Curator retries per
// its retry policy, RETRY_DUE_TO_MISSING_NODE).
const maxVanished = 3

// errOursGone: one of the lease nodes of this acquire is missing.
var errOursGone = errors.New("a lease node of ours is gone")

// acquire is Curator's internalAcquire1Lease for n leases at once: take the
// internal lock, create the lease nodes, wait until the lease nodes number
// at most the maximum (only the internal lock's holder waits on the leases'
// children; everyone else waits in the lock's queue), release the lock. On
// any failure every node made is deleted first (CURATOR-335, CURATOR-462).
func (s *Semaphore) acquire(ctx context.Context, n int, try bool) ([]*Lease, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: lease count %d must be at least 1", ErrInvalidArgument, n)
	}
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	if s.wake == nil && n > s.max() {
		return nil, fmt.Errorf("%w: %d leases asked of a semaphore of %d", ErrInvalidArgument, n, s.max())
	}
	// Wait only while the internal lock holds (a lost session ends it), and
	// no longer than ctx.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if try {
		if err := s.lock.TryLock(ctx); err != nil {
			if errors.Is(err, locks.ErrLocked) {
				return nil, fmt.Errorf("semaphore %s: %w (internal lock busy)", s.path, ErrNoLease)
			}
			return nil, fmt.Errorf("semaphore %s: internal lock: %w", s.path, err)
		}
	} else {
		hctx, err := s.lock.Acquire(ctx)
		if err != nil {
			return nil, fmt.Errorf("semaphore %s: internal lock: %w", s.path, err)
		}
		stop := context.AfterFunc(hctx, cancel)
		defer stop()
	}
	defer func() { // after any clean-up below: no orphan of ours is seen by the next holder
		rctx, cancel := recipe.CleanupContext(ctx)
		defer cancel()
		if err := s.lock.Unlock(rctx); err != nil && !errors.Is(err, framework.ErrDeletePending) {
			s.client.Logger().Warn("releasing the semaphore's internal lock", "path", s.path, "err", err)
		}
	}()

	// The count rule, over every node of this acquire: granted when the
	// lease nodes number at most the maximum and all of ours are there;
	// otherwise wait for any change among the leases (Decision{}).
	ours := make(map[string]bool, n)
	grant := func(contenders []string, _ int) (locks.Decision, error) {
		found := 0
		for _, c := range contenders {
			if ours[c] {
				found++
			}
		}
		if found < len(ours) {
			return locks.Decision{}, errOursGone
		}
		if len(contenders) <= s.max() {
			return locks.Decision{Held: true}, nil
		}
		return locks.Decision{}, nil
	}
	d, err := locks.NewDriver(s.client, s.leases, leaseName, grant)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		clear(ours)
		made, err := s.attempt(wctx, d, n, try, ours)
		if err == nil {
			leases := make([]*Lease, n)
			for i, c := range made {
				leases[i] = newLease(ctx, s, c)
			}
			return leases, nil
		}
		s.deleteAll(ctx, made)
		if wctx.Err() == nil && attempt < maxVanished && vanishedNotLost(err, made) {
			s.client.Logger().Warn("a lease node vanished while waiting; starting over", "path", s.path, "err", err)
			continue
		}
		switch {
		case ctx.Err() == nil && wctx.Err() != nil:
			cause := framework.ErrSessionLost
			select {
			case <-s.client.Done():
				cause = framework.ErrClosed
			default:
			}
			err = fmt.Errorf("%w: internal lock of %s: %w", locks.ErrLockLost, s.path, cause)
		case errors.Is(err, locks.ErrLocked):
			err = fmt.Errorf("%w: %s", ErrNoLease, s.path)
		case errors.Is(err, errOursGone) && anyLost(made):
			err = fmt.Errorf("%w: %w: %w", locks.ErrNodeVanished, err, framework.ErrSessionLost)
		case errors.Is(err, errOursGone):
			err = fmt.Errorf("%w: %w", locks.ErrNodeVanished, err)
		}
		return nil, fmt.Errorf("semaphore %s: acquire: %w", s.path, err)
	}
}

// attempt makes the n lease nodes (recording their names in ours) and waits
// until they are granted. It returns the nodes made, also on error.
func (s *Semaphore) attempt(ctx context.Context, d *locks.Driver, n int, try bool, ours map[string]bool) ([]*locks.Contender, error) {
	made := make([]*locks.Contender, 0, n)
	for len(made) < n {
		c, err := d.Enqueue(ctx, s.opts.data)
		if err != nil {
			return made, err
		}
		made = append(made, c)
		ours[c.Name()] = true
		if s.opts.onEnqueue != nil {
			s.opts.onEnqueue(c.Node())
		}
	}
	return made, made[n-1].Wait(ctx, locks.WaitOptions{Try: try, Wake: s.wake})
}

// vanishedNotLost reports whether err says a node of ours vanished while
// its session lives on: someone deleted it, and a new node may do.
func vanishedNotLost(err error, made []*locks.Contender) bool {
	if !errors.Is(err, locks.ErrNodeVanished) && !errors.Is(err, errOursGone) {
		return false
	}
	return !errors.Is(err, framework.ErrSessionLost) && !anyLost(made)
}

// anyLost reports whether the session of any of the nodes is lost.
func anyLost(made []*locks.Contender) bool {
	for _, c := range made {
		if c.Session().Lost() {
			return true
		}
	}
	return false
}

// deleteAll deletes nodes made by a failed acquire: guaranteed, never an
// orphan lease (CURATOR-335, CURATOR-462), whatever ctx's state.
func (s *Semaphore) deleteAll(ctx context.Context, made []*locks.Contender) {
	if len(made) == 0 {
		return
	}
	rctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	for _, c := range made {
		if err := c.Delete(rctx); err != nil && !errors.Is(err, framework.ErrDeletePending) {
			s.client.Logger().Warn("deleting a lease node after a failed acquire", "node", c.Node(), "err", err)
		}
	}
}

// Return gives a lease back (the same as l.Release; Curator's returnLease).
// A lease of another semaphore (another path or client) is ErrForeignLease
// and is not returned.
func (s *Semaphore) Return(ctx context.Context, l *Lease) error {
	if l == nil {
		return fmt.Errorf("%w: nil lease", ErrInvalidArgument)
	}
	if l.s != s && (l.s.client != s.client || l.s.path != s.path) {
		return fmt.Errorf("%w: %s is not of %s", ErrForeignLease, l.Node(), s.path)
	}
	return l.Release(ctx)
}

// ReturnAll gives back every lease, trying each, and returns the failures
// joined (Curator's returnAll).
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
// (Curator's getParticipantNodes, which returns bare names unsorted). A
// waiting acquirer's node is listed too.
func (s *Semaphore) Participants(ctx context.Context) ([]string, error) {
	return s.list.Participants(ctx)
}

// Lease is one lease of a Semaphore (Curator's Lease): return it with
// Release. Like a locks.Mutex hold, it has a held context (Context),
// cancelled with cause locks.ErrLockLost when the lease is lost, a fencing
// token and guarded writes. Lost is closed if its session is lost (or
// suspended, per the semaphore's SuspendPolicy), or if Release finds its
// node gone; its node is then deleted in the background if the server has
// not removed it already, so a lost lease goes back to the others and no
// longer counts as ours (CURATOR-595).
type Lease struct {
	s    *Semaphore
	c    *locks.Contender
	h    *locks.Hold
	mu   sync.Mutex
	done bool
}

func newLease(ctx context.Context, s *Semaphore, c *locks.Contender) *Lease {
	return &Lease{s: s, c: c, h: locks.NewHold(ctx, c, s.opts.policy)}
}

// Node returns the lease's node path (apache/curator#799; Curator's
// getNodeName gives the bare name).
func (l *Lease) Node() string { return l.c.Node() }

// Data reads the lease node's data (Curator's getData).
func (l *Lease) Data(ctx context.Context) ([]byte, error) {
	d, _, err := l.s.client.Get(ctx, l.c.Node())
	return d, err
}

// Lost returns a channel closed when the lease is lost.
func (l *Lease) Lost() <-chan struct{} { return l.h.Lost() }

// Context returns the held context: it carries the acquiring context's
// values and is cancelled when the lease is lost (cause locks.ErrLockLost)
// or released.
func (l *Lease) Context() context.Context { return l.h.Context() }

// FencingToken returns the creation zxid of the lease node: it strictly
// increases from one lease to the next, so a resource can reject a holder
// older than the newest it has seen (see locks.Mutex.FencingToken).
func (l *Lease) FencingToken(ctx context.Context) (int64, error) {
	if l.released() {
		return 0, fmt.Errorf("%w: lease %s already returned", ErrNotHeld, l.c.Node())
	}
	return l.h.FencingToken(ctx)
}

// GuardedMulti runs ops as one transaction that succeeds only while the
// lease node exists; if it is gone the error wraps locks.ErrLockLost and
// nothing was written (see locks.Mutex.GuardedMulti).
func (l *Lease) GuardedMulti(ctx context.Context, ops ...framework.Op) ([]framework.OpResult, error) {
	if l.released() {
		return nil, fmt.Errorf("%w: lease %s already returned", ErrNotHeld, l.c.Node())
	}
	return l.h.GuardedMulti(ctx, ops...)
}

func (l *Lease) released() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}

// Release returns the lease (Curator's Lease.close): a guaranteed delete of
// exactly its node. Releasing twice is an error wrapping ErrNotHeld. A
// *framework.DeletePendingError means the lease is returned locally and its
// node goes in the background. A release never hides a loss: an error
// wrapping locks.ErrLockLost says the lease had been lost already, or that
// its node was gone when released (its session expired before the client
// noticed, or someone deleted it); Lost is closed then.
func (l *Lease) Release(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return fmt.Errorf("%w: lease %s already returned", ErrNotHeld, l.c.Node())
	}
	l.done = true
	l.mu.Unlock()
	return l.h.Release(ctx)
}
