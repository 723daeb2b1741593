// Package multilock holds Curator's InterProcessMultiLock for Go: several
// locks held as one.
//
// Lock takes the members in the order given and, if one cannot be had
// before the context is done (one deadline for the whole acquisition, not
// Curator's full timeout per member) or fails, releases every member it took
// in that attempt, in reverse order, and says which member failed. Nothing
// is left held or half-held. Unlock releases every member in reverse order,
// tries them all even when some fail, and returns every failure joined
// (Curator reports the first and logs the rest).
//
// # Deadlock
//
// Processes that take overlapping sets of locks in the same order cannot
// deadlock: whoever gets the first common lock gets the rest in turn. With
// different orders (A then B, and B then A) two processes can each hold one
// and wait for the other; the context deadline ends that wait, the partial
// acquisition is rolled back, and nothing stays held (see the examples).
// Keep one global order of lock paths when you can.
package multilock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
)

// ErrInvalidArgument: no members, a nil member, a nil client or bad path.
var ErrInvalidArgument = errors.New("multilock: invalid argument")

// MultiLock is Curator's InterProcessMultiLock; it satisfies locks.Locker.
// Reentrancy follows the members' rules (a Mutex re-enters only with the
// context its own Acquire/Do handed out; a semaphore Mutex never does).
type MultiLock struct {
	members []locks.Locker

	mu   sync.Mutex
	held bool
	lost chan struct{}
	stop chan struct{}
	done chan struct{}
}

var _ locks.Locker = (*MultiLock)(nil)

// New returns a multi-lock over the given members, taken in this order.
func New(members ...locks.Locker) (*MultiLock, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: no locks", ErrInvalidArgument)
	}
	for i, m := range members {
		if m == nil {
			return nil, fmt.Errorf("%w: lock %d is nil", ErrInvalidArgument, i)
		}
	}
	return &MultiLock{members: append([]locks.Locker(nil), members...)}, nil
}

// NewFromPaths returns a multi-lock over new mutexes on the paths (Curator's
// InterProcessMultiLock(client, paths)).
func NewFromPaths(client *framework.Client, paths ...string) (*MultiLock, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no paths", ErrInvalidArgument)
	}
	members := make([]locks.Locker, len(paths))
	for i, p := range paths {
		m, err := locks.NewMutex(client, p)
		if err != nil {
			return nil, fmt.Errorf("%w: lock %d: %w", ErrInvalidArgument, i, err)
		}
		members[i] = m
	}
	return New(members...)
}

// MemberError says which member of a MultiLock failed.
type MemberError struct {
	Index int
	Path  string // the member's Path(), if it has one
	Err   error
}

func (e *MemberError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("multilock: lock %d (%s): %v", e.Index, e.Path, e.Err)
	}
	return fmt.Sprintf("multilock: lock %d: %v", e.Index, e.Err)
}

func (e *MemberError) Unwrap() error { return e.Err }

func (ml *MultiLock) memberErr(i int, err error) error {
	path := ""
	if p, ok := ml.members[i].(interface{ Path() string }); ok {
		path = p.Path()
	}
	return &MemberError{Index: i, Path: path, Err: err}
}

// Lock takes every member in order, or none: on failure the members taken
// are released in reverse order and the error (a *MemberError) names the
// member that failed and wraps its cause (ctx.Err() when the deadline ended it).
func (ml *MultiLock) Lock(ctx context.Context) error {
	return ml.lock(ctx, func(m locks.Locker) error { return m.Lock(ctx) })
}

// TryLock is Lock with each member's TryLock: no waiting. Members without a
// TryLock are waited for within ctx.
func (ml *MultiLock) TryLock(ctx context.Context) error {
	return ml.lock(ctx, func(m locks.Locker) error {
		if t, ok := m.(interface{ TryLock(context.Context) error }); ok {
			return t.TryLock(ctx)
		}
		return m.Lock(ctx)
	})
}

func (ml *MultiLock) lock(ctx context.Context, take func(locks.Locker) error) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	for i, m := range ml.members {
		if err := take(m); err != nil {
			rctx := context.WithoutCancel(ctx)
			for j := i - 1; j >= 0; j-- {
				if uerr := ml.members[j].Unlock(rctx); uerr != nil && !errors.Is(uerr, framework.ErrDeletePending) {
					err = errors.Join(err, fmt.Errorf("rolling back: %w", ml.memberErr(j, uerr)))
				}
			}
			return ml.memberErr(i, err)
		}
	}
	ml.mu.Lock()
	ml.held = true
	ml.lost, ml.stop, ml.done = make(chan struct{}), make(chan struct{}), make(chan struct{})
	lost, stop, done := ml.lost, ml.stop, ml.done
	ml.mu.Unlock()
	cases := make([]<-chan struct{}, len(ml.members))
	for i, m := range ml.members {
		cases[i] = m.Lost()
	}
	go watchLost(cases, lost, stop, done)
	return nil
}

// watchLost closes lost when any member's channel closes, until stop.
func watchLost(members []<-chan struct{}, lost chan struct{}, stop <-chan struct{}, done chan struct{}) {
	defer close(done)
	fired := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for _, ch := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ch:
				once.Do(func() { close(fired) })
			case <-stop:
			}
		}()
	}
	select {
	case <-fired:
		close(lost)
	case <-stop:
	}
	wg.Wait()
}

// Unlock releases every member in reverse order, each even if another
// fails, and returns every failure joined (each a *MemberError).
// locks.ErrNotHeld if the multi-lock is not held.
func (ml *MultiLock) Unlock(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	ml.mu.Lock()
	if !ml.held {
		ml.mu.Unlock()
		return locks.ErrNotHeld
	}
	ml.held = false
	stop, done := ml.stop, ml.done
	ml.mu.Unlock()
	close(stop)
	<-done
	var errs []error
	for i := len(ml.members) - 1; i >= 0; i-- {
		if err := ml.members[i].Unlock(ctx); err != nil {
			errs = append(errs, ml.memberErr(i, err))
		}
	}
	return errors.Join(errs...)
}

// IsAcquiredInThisProcess reports whether every member is held.
func (ml *MultiLock) IsAcquiredInThisProcess() bool {
	for _, m := range ml.members {
		if !m.IsAcquiredInThisProcess() {
			return false
		}
	}
	return true
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Lost returns a channel closed when any member is lost while the multi-lock
// is held (closed at once when it is not held).
func (ml *MultiLock) Lost() <-chan struct{} {
	ml.mu.Lock()
	defer ml.mu.Unlock()
	if !ml.held {
		return closedChan
	}
	return ml.lost
}
