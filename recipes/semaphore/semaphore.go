package semaphore

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/recipes/shared"
)

// Semaphore is Curator's InterProcessSemaphoreV2: at most a maximum number of
// leases held at once across every process using the same path. The maximum
// is fixed (New) or read from a shared.Count (NewWithSharedCount); as in
// Curator, processes are not checked to agree on it. Safe for concurrent use:
// goroutines sharing one Semaphore contend exactly as separate processes do.
type Semaphore struct {
	client *framework.Client
	path   string
	leases string         // <path>/leases
	lock   *driver.Driver // the internal lock, <path>/locks
	lease  *driver.Driver // the lease nodes, <path>/leases, under the count rule
	max    func() int
	wake   func() <-chan struct{}
	opts   options
}

// New returns a semaphore on path allowing maxLeases leases at once
// (InterProcessSemaphoreV2(client, path, maxLeases)). It does no I/O; a nil
// client, an invalid path, maxLeases < 1 or a bad option gives an error
// wrapping curator.ErrInvalidArgument.
func New(client *framework.Client, path string, maxLeases int, opts ...Option) (*Semaphore, error) {
	if maxLeases < 1 {
		return nil, fmt.Errorf("semaphore: %w: max leases %d must be at least 1", curator.ErrInvalidArgument, maxLeases)
	}
	return newSemaphore(client, path, func() int { return maxLeases }, nil, opts)
}

// NewWithSharedCount returns a semaphore whose maximum is the value of a
// shared.Count (InterProcessSemaphoreV2(client, path, SharedCountReader)).
// Start the count before acquiring: until then its value is 0 and nobody
// gets a lease. Acquirers waiting for a lease look again whenever the count
// changes, so a raised maximum lets them in at once; a lowered one holds new
// acquirers back until enough leases are returned (leases already granted
// are not taken back).
func NewWithSharedCount(client *framework.Client, path string, count *shared.Count, opts ...Option) (*Semaphore, error) {
	if count == nil {
		return nil, fmt.Errorf("semaphore: %w: nil shared count", curator.ErrInvalidArgument)
	}
	return newSemaphore(client, path, count.Count, count.Changed, opts)
}

func newSemaphore(client *framework.Client, path string, max func() int, wake func() <-chan struct{}, opts []Option) (*Semaphore, error) {
	if err := recipe.CheckArgs(client, "semaphore", path); err != nil {
		return nil, fmt.Errorf("semaphore: %w", err)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &Semaphore{client: client, path: path, leases: framework.JoinPath(path, layout.LeasesChild), max: max, wake: wake, opts: o}
	if s.lock, err = driver.New(client, framework.JoinPath(path, layout.LocksChild), layout.MutexName, driver.MaxLeases(1)); err != nil {
		return nil, fmt.Errorf("semaphore: %w", err)
	}
	// The count rule: granted when the lease nodes number at most the
	// maximum (the acquisition's own nodes all there: WaitOptions.With);
	// otherwise wait for any change among them (Decision{}).
	grant := func(q *driver.Queue, _ int) (driver.Decision, error) {
		return driver.Decision{Held: s.fits(q.Len())}, nil
	}
	if s.lease, err = driver.New(client, s.leases, layout.LeaseName, grant); err != nil {
		return nil, fmt.Errorf("semaphore: %w", err)
	}
	s.lease.SetWatchesAll() // attempt waits with WatchAll
	return s, nil
}

// Path returns the semaphore's path.
func (s *Semaphore) Path() string { return s.path }

// Acquire blocks until a lease is granted or ctx is done; on failure the
// lease node it made is deleted before it returns (Curator's acquire() and
// acquire(time, unit), the deadline being ctx's). One exception: a lease
// create it started early, while it waited for the internal lock
// (speculate.go), and that is still under way when it fails, is deleted
// once made, in the background. A lease it returns is never one known
// lost already: it starts over instead (see the package doc).
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	leases, err := s.observed(ctx, 1, false) // telemetry.go
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// TryAcquire takes a lease only if one is free now; else it returns an error
// wrapping curator.ErrLocked at once (Curator's acquire(0, unit)). As in
// Curator, "now" includes the internal lock: while another acquirer holds it
// (it is waiting for a lease, or about to get one), TryAcquire gets
// curator.ErrLocked. ctx bounds the ZooKeeper calls.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) {
	leases, err := s.observed(ctx, 1, true) // telemetry.go
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// AcquireN acquires n leases, all or none, within ctx (one deadline for all;
// Curator's acquire(qty[, time, unit])). n < 1 is an error wrapping
// curator.ErrInvalidArgument, and so is n above a fixed maximum, which
// could never be granted. Unlike Curator's acquire(qty), which takes the
// leases one at a time and can deadlock when acquirers each hold part of
// what they want, the n lease nodes are made under one hold of the internal
// lock and granted together (the count rule on all of them): nobody ever
// waits holding part of a set. On failure every node made is deleted
// before AcquireN returns.
func (s *Semaphore) AcquireN(ctx context.Context, n int) ([]*Lease, error) {
	return s.observed(ctx, n, false) // telemetry.go
}

// maxVanished bounds how often an acquire starts over: because a node of
// ours was deleted by someone else while it waited (a lease node: Curator
// retries per its retry policy, RETRY_DUE_TO_MISSING_NODE; the internal
// lock's node: Curator waits on), or because its leases were lost before
// it could return them.
const maxVanished = 3

// acquire is Curator's internalAcquire1Lease for n leases at once: take the
// internal lock, create the lease nodes, wait until the lease nodes number
// at most the maximum (only the internal lock's holder waits on the leases'
// children; everyone else waits in the lock's queue), release the lock. On
// any failure every node made is deleted first (CURATOR-335, CURATOR-462).
// It never returns a lease known lost (lostAtGrant): it starts over, within
// ctx, as it does when its internal-lock node is deleted (locked).
func (s *Semaphore) acquire(ctx context.Context, n int, try bool) ([]*Lease, error) {
	if n < 1 {
		return nil, fmt.Errorf("semaphore: %w: lease count %d must be at least 1", curator.ErrInvalidArgument, n)
	}
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	if s.wake == nil && n > s.max() {
		return nil, fmt.Errorf("semaphore: %w: %d leases asked of a semaphore of %d", curator.ErrInvalidArgument, n, s.max())
	}
	starts := 0
	for {
		leases, again, err := s.locked(ctx, n, try, &starts)
		if err == nil {
			if err = s.lostAtGrant(ctx, leases); err == nil {
				return leases, nil
			}
			again = true
		}
		if !again || starts >= maxVanished || ctx.Err() != nil {
			return nil, err
		}
		starts++
		s.client.Logger().Warn("semaphore acquire starting over", "path", s.path, "err", err)
	}
}

// locked is one hold of the internal lock: take it, make the lease nodes,
// wait until they are granted (attempt), release it. again says the
// acquire may start over: the internal lock's node was deleted by someone
// else while held, so it no longer keeps the next acquirer from waiting
// beside this one (its lease node is deleted first).
func (s *Semaphore) locked(ctx context.Context, n int, try bool, starts *int) (_ []*Lease, again bool, _ error) {
	// The internal lock only keeps acquirers from waiting side by side (two
	// waiting lease nodes could keep the count above the maximum for ever);
	// the count rule alone keeps the leases within the maximum. So a
	// suspended connection need not abort a waiting acquirer: only a lost
	// session does (its lease node is gone with it). Wait only while the
	// internal lock holds, and no longer than ctx. A waiter for the lock
	// that needs a round trip to know it holds once its predecessor goes
	// starts its lease create beside it (speculate.go).
	var sp *speculation
	o := &driver.WaitOptions{Try: try}
	if n == 1 && !try {
		o.OnWoken = func() func() {
			sp = s.speculate(ctx)
			return func() { sp.discard(); sp = nil } // not holding the lock after all
		}
	}
	c, err := s.lock.Acquire(ctx, nil, o)
	if err != nil {
		sp.discard()
		return nil, false, fmt.Errorf("semaphore %s: internal lock: %w", s.path, err)
	}
	// The holding watches its node (issue 38): deleted by someone else (an
	// operator), the lock is the next acquirer's, who would wait beside us
	// for ever once both lease nodes could not fit. Curator does not watch.
	lock := c.Hold(ctx, driver.HoldOptions{Policy: curator.LoseOnLost, WatchNode: true})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(lock.Context(), cancel)
	defer stop()
	defer s.unlock(ctx, lock) // after any clean-up below: no orphan of ours is seen by the next holder

	for {
		made, err := s.attempt(wctx, n, try, sp.take(wctx))
		sp = nil
		if err == nil {
			return s.leasesOf(ctx, made), false, nil
		}
		s.deleteAll(ctx, made)
		if wctx.Err() == nil && *starts < maxVanished && vanishedNotLost(err, made) {
			*starts++
			s.client.Logger().Warn("a lease node vanished while waiting; starting over", "path", s.path, "err", err)
			continue
		}
		if ctx.Err() == nil && wctx.Err() != nil {
			again, err = lockLost(lock, err)
		}
		return nil, again, fmt.Errorf("semaphore %s: acquire: %w", s.path, err)
	}
}

// lockLost is the error of a wait that the internal lock's loss ended, and
// whether the acquire may start over: the lock was lost with its session
// alive, so its node was deleted by someone else (its node watch). The
// wait's own error wins (its node vanished with the session:
// ErrNodeVanished wrapping ErrSessionLost, as a locks.Mutex waiter's);
// else the lock's node vanished, and the error says so as the wait's
// would. Never curator.ErrLockLost: an acquire held nothing yet.
func lockLost(lock *driver.Hold, waitErr error) (again bool, err error) {
	sess := lock.Contender().Session()
	switch {
	case !errors.Is(waitErr, context.Canceled):
		return !sess.Lost() && errors.Is(waitErr, curator.ErrNodeVanished), waitErr
	case sess.Lost():
		return false, fmt.Errorf("%w: internal lock node %s: %w", curator.ErrNodeVanished, lock.Node(), sess.Err())
	}
	return true, fmt.Errorf("%w: internal lock node %s was deleted while held", curator.ErrNodeVanished, lock.Node())
}

// unlock releases the internal lock; a loss known already is no news.
func (s *Semaphore) unlock(ctx context.Context, lock *driver.Hold) {
	rctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	lost := lock.IsLost()
	if err := lock.Release(rctx); err != nil && !lost {
		s.client.Logger().Warn("releasing the semaphore's internal lock", "path", s.path, "err", err)
	}
}

// leasesOf starts holding the granted nodes.
func (s *Semaphore) leasesOf(ctx context.Context, made []*driver.Contender) []*Lease {
	leases := make([]*Lease, len(made))
	for i, c := range made {
		leases[i] = &Lease{s: s, h: c.Hold(telemetry.Outer(ctx), driver.HoldOptions{Policy: s.opts.Policy})}
	}
	return leases
}

// lostAtGrant checks, once the internal lock is released, that no lease
// was lost meanwhile (its connection suspended under LoseOnSuspend, its
// session lost): Acquire never returns a lease known lost (issue 38). If
// one was, it returns them all (a lost one's node goes in the background)
// and an error wrapping curator.ErrLockLost, saying why.
func (s *Semaphore) lostAtGrant(ctx context.Context, leases []*Lease) error {
	var cause error
	for _, l := range leases {
		if l.h.IsLost() {
			cause = context.Cause(l.h.Context())
			break
		}
	}
	if cause == nil {
		return nil
	}
	rctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	for _, l := range leases {
		l.h.Release(rctx) // nil, pending or the loss: each node goes
	}
	return fmt.Errorf("semaphore %s: acquire: lease lost before it was returned: %w", s.path, cause)
}

// attempt makes the n lease nodes and waits until they are granted
// together; first, if not nil, is one made already (a speculation's). It
// returns the nodes made, also on error.
func (s *Semaphore) attempt(ctx context.Context, n int, try bool, first *driver.Contender) ([]*driver.Contender, error) {
	made := make([]*driver.Contender, 0, n)
	for len(made) < n {
		c := first
		first = nil
		if c == nil {
			var err error
			if c, err = s.lease.Enqueue(ctx, s.opts.Data); err != nil {
				return made, err
			}
		}
		made = append(made, c)
		if s.opts.OnEnqueue != nil {
			s.opts.OnEnqueue(c.Node())
		}
	}
	// The count rule, on the count the last create told (no read needed).
	return made, made[n-1].Wait(ctx, &driver.WaitOptions{Try: try, Wake: s.wake, WatchAll: true, Fits: s.fits, With: made[:n-1]})
}

// fits is the count rule: n lease nodes (ours included) are within the
// maximum.
func (s *Semaphore) fits(n int) bool { return n <= s.max() }

// vanishedNotLost reports whether err says a node of ours vanished while
// its session lives on: someone deleted it, and a new node may do.
func vanishedNotLost(err error, made []*driver.Contender) bool {
	if !errors.Is(err, curator.ErrNodeVanished) {
		return false
	}
	return !errors.Is(err, curator.ErrSessionLost) && !anyLost(made)
}

// anyLost reports whether the session of any of the nodes is lost.
func anyLost(made []*driver.Contender) bool {
	for _, c := range made {
		if c.Session().Lost() {
			return true
		}
	}
	return false
}

// deleteAll deletes nodes made by a failed acquire: guaranteed, never an
// orphan lease (CURATOR-335, CURATOR-462), whatever ctx's state.
func (s *Semaphore) deleteAll(ctx context.Context, made []*driver.Contender) {
	for _, c := range made {
		c.DeleteQuietly(ctx)
	}
}

// Return gives a lease back (the same as l.Release; Curator's returnLease).
// A lease of another semaphore (another path or client) is an error
// wrapping curator.ErrInvalidArgument and is not returned.
func (s *Semaphore) Return(ctx context.Context, l *Lease) error {
	if l == nil || l.s == nil {
		return fmt.Errorf("semaphore: %w: nil lease, or one not from Acquire", curator.ErrInvalidArgument)
	}
	if l.s != s && (l.s.client != s.client || l.s.path != s.path) {
		return fmt.Errorf("semaphore: %w: lease %s is not of %s", curator.ErrInvalidArgument, l.Node(), s.path)
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
	return s.lease.Participants(ctx)
}
