package multilock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/recipes/locks"
)

// tryLocker is what TryLock needs of every member.
type tryLocker interface {
	TryLock(ctx context.Context) error
}

// MultiLock is Curator's InterProcessMultiLock: several locks held as one.
// It satisfies curator.Locker. Its methods are safe for concurrent use.
type MultiLock struct {
	members []curator.Locker
	noTry   int // index of the first member without TryLock, -1 if none
	tel     telemetry.Recipe

	mu sync.Mutex
	h  *holding // nil when not held
}

// holding is one holding of the multi-lock: how many Locks it counts, and
// the watcher that closes lost when a member is lost.
type holding struct {
	count   int
	members []<-chan struct{} // the members' Lost channels for this holding
	lost    chan struct{}
	stop    chan struct{} // ends the watcher
	done    chan struct{} // closed when the watcher has ended; nil if never started
	tel     *telemetry.Holding
}

var _ curator.Locker = (*MultiLock)(nil)

// New returns a multi-lock over the given members, taken in this order and
// released in the reverse order. It needs at least one member, no nil one,
// and no member twice: neither the same lock nor two locks with the same
// Path(), a nested multi-lock's members included (a Lock would wait on
// itself until its deadline); otherwise the
// error wraps curator.ErrInvalidArgument. Paths are compared as given, so two locks
// of clients with different namespaces on one relative path are refused
// too.
func New(members ...curator.Locker) (*MultiLock, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("multilock: %w: no locks", curator.ErrInvalidArgument)
	}
	ml := &MultiLock{members: append([]curator.Locker(nil), members...), noTry: -1}
	seen := make(map[string]int, len(members))
	for i, m := range ml.members {
		if m == nil || (reflect.ValueOf(m).Kind() == reflect.Pointer && reflect.ValueOf(m).IsNil()) {
			return nil, fmt.Errorf("multilock: %w: lock %d is nil", curator.ErrInvalidArgument, i)
		}
		for j := range i {
			if reflect.TypeOf(m).Comparable() && m == ml.members[j] {
				return nil, fmt.Errorf("multilock: %w: locks %d and %d are the same lock", curator.ErrInvalidArgument, j, i)
			}
		}
		for _, p := range memberPaths(m) {
			if j, dup := seen[p]; dup {
				return nil, fmt.Errorf("multilock: %w: locks %d and %d are both on %s", curator.ErrInvalidArgument, j, i, p)
			}
			seen[p] = i
		}
		if _, ok := m.(tryLocker); !ok && ml.noTry < 0 {
			ml.noTry = i
		}
	}
	ml.tel = recipeTelemetry(ml.members)
	return ml, nil
}

// memberPaths returns the paths a lock takes: its Path(), or those of a
// nested multi-lock's members.
func memberPaths(m curator.Locker) []string {
	switch m := m.(type) {
	case *MultiLock:
		var ps []string
		for _, n := range m.members {
			ps = append(ps, memberPaths(n)...)
		}
		return ps
	case interface{ Path() string }:
		return []string{m.Path()}
	}
	return nil
}

// NewFromPaths returns a multi-lock over new locks.Mutex members on the
// paths, in this order (Curator's InterProcessMultiLock(client, paths)).
// A nil client, no paths or an invalid path give an error wrapping
// curator.ErrInvalidArgument.
func NewFromPaths(client *framework.Client, paths ...string) (*MultiLock, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("multilock: %w: no paths", curator.ErrInvalidArgument)
	}
	members := make([]curator.Locker, len(paths))
	for i, p := range paths {
		m, err := locks.NewMutex(client, p)
		if err != nil {
			return nil, fmt.Errorf("multilock: lock %d: %w", i, err)
		}
		members[i] = m
	}
	return New(members...)
}

// MemberError says which member of a MultiLock failed, and why.
type MemberError struct {
	Index int    // the member's position in the list given to New
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

func (ml *MultiLock) memberErr(i int, err error) *MemberError {
	path := ""
	if p, ok := ml.members[i].(interface{ Path() string }); ok {
		path = p.Path()
	}
	return &MemberError{Index: i, Path: path, Err: err}
}

// Lock takes every member in order, or none. ctx is one deadline for the
// whole acquisition. On failure the members taken in this attempt are
// released in reverse order and the error, a *MemberError, names the member
// that failed and wraps its cause (ctx.Err() when ctx ended the wait; an
// error wrapping curator.ErrLockLost if a member taken earlier was lost while
// later ones were awaited). Errors in giving members back, if any, are
// joined to it.
func (ml *MultiLock) Lock(ctx context.Context) error {
	return ml.lock(ctx, func(ctx context.Context, m curator.Locker) error { return m.Lock(ctx) })
}

// TryLock takes every member with the member's own TryLock, or none: a
// member held elsewhere gives a *MemberError wrapping curator.ErrLocked, after
// the members taken are released in reverse order. ctx bounds the ZooKeeper
// calls. If a member has no TryLock(ctx) error method, TryLock takes nothing
// and returns an error wrapping errors.ErrUnsupported.
func (ml *MultiLock) TryLock(ctx context.Context) error {
	if ml.noTry >= 0 {
		return ml.memberErr(ml.noTry, fmt.Errorf("%w: TryLock (a %T has none)", errors.ErrUnsupported, ml.members[ml.noTry]))
	}
	return ml.lock(ctx, func(ctx context.Context, m curator.Locker) error { return m.(tryLocker).TryLock(ctx) })
}

// lock is Lock and TryLock, as the telemetry records them: take is how
// each member is taken, with the acquisition's context.
func (ml *MultiLock) lock(ctx context.Context, take func(context.Context, curator.Locker) error) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	ctx, acq := ml.tel.StartAcquire(ctx)
	err := ml.take(ctx, take)
	acq.End(err)
	return err
}

func (ml *MultiLock) take(ctx context.Context, take func(context.Context, curator.Locker) error) error {
	for i, m := range ml.members {
		err := ctx.Err() // one deadline for all: do not start a member past it
		if err == nil {
			err = take(ctx, m)
		}
		if err != nil {
			return ml.rollback(ctx, i, ml.memberErr(i, err))
		}
	}
	// A member taken early may have been lost while a later one was awaited:
	// then the set is not whole, and is not handed out as if it were.
	for i, m := range ml.members {
		select {
		case <-m.Lost():
			return ml.rollback(ctx, len(ml.members), ml.memberErr(i, fmt.Errorf("%w: lost while the other locks were being taken", curator.ErrLockLost)))
		default:
		}
	}
	ml.mu.Lock()
	defer ml.mu.Unlock()
	if ml.h != nil { // every member re-entered: one more Lock of this holding
		ml.h.count++
		return nil
	}
	h := &holding{count: 1, members: make([]<-chan struct{}, len(ml.members)), lost: make(chan struct{}), stop: make(chan struct{}), tel: ml.tel.Holding()}
	for i, m := range ml.members {
		h.members[i] = m.Lost()
	}
	ml.h = h
	return nil
}

// rollback releases members [0, n) in reverse order after a failed
// acquisition and returns cause with any failure to release joined to it.
// A member that had been lost (curator.ErrLockLost, its node already being
// deleted) is released: that is no failure to give back, and the set was
// never handed out.
func (ml *MultiLock) rollback(ctx context.Context, n int, cause *MemberError) error {
	if n == 0 {
		return cause
	}
	rctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	errs := []error{cause}
	for j := n - 1; j >= 0; j-- {
		err := ml.members[j].Unlock(rctx)
		if err != nil && !errors.Is(err, curator.ErrLockLost) {
			errs = append(errs, fmt.Errorf("multilock: giving back after the failure: %w", ml.memberErr(j, err)))
		}
	}
	if len(errs) == 1 {
		return cause
	}
	return errors.Join(errs...)
}

// Unlock releases one Lock. The last one releases every member in reverse
// order, trying each even if another fails, and returns every failure
// joined (errors.Join), each a *MemberError wrapping the member's error.
// Members follow the module's release rule (package curator, "Releasing"),
// and so does Unlock: nil once every member is released (deletes may go on
// in the background), curator.ErrLockLost for a member that had been lost,
// curator.ErrNotHeld if the multi-lock is not held. After an Unlock of the
// last Lock the multi-lock is not held whatever the errors; a member whose
// own Unlock failed may still hold (that is its rule).
func (ml *MultiLock) Unlock(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	ml.mu.Lock()
	h := ml.h
	if h == nil {
		ml.mu.Unlock()
		return fmt.Errorf("multilock: %w", curator.ErrNotHeld)
	}
	h.count--
	last := h.count == 0
	var done chan struct{}
	if last {
		ml.h = nil // from here Lost cannot start a watcher for h
		done = h.done
	}
	ml.mu.Unlock()
	var rel *telemetry.Release
	if last {
		close(h.stop)
		if done != nil {
			<-done
		}
		h.tel.Released(releaseReason(h))
		ctx, rel = ml.tel.StartRelease(ctx)
	}
	var errs []error
	for i := len(ml.members) - 1; i >= 0; i-- {
		if err := ml.members[i].Unlock(ctx); err != nil {
			errs = append(errs, ml.memberErr(i, err))
		}
	}
	err := errors.Join(errs...)
	rel.End(err)
	return err
}

// IsAcquiredInThisProcess reports whether every member is held by this
// process (Curator: all of them).
func (ml *MultiLock) IsAcquiredInThisProcess() bool {
	for _, m := range ml.members {
		if !m.IsAcquiredInThisProcess() {
			return false
		}
	}
	return true
}

// Lost returns a channel closed when any member of the holding is lost
// while the multi-lock is held; closed at once when it is not held. The
// first call for a holding starts one goroutine, which Unlock ends; as for
// the members, Unlock does not close the channel.
func (ml *MultiLock) Lost() <-chan struct{} {
	ml.mu.Lock()
	defer ml.mu.Unlock()
	h := ml.h
	if h == nil {
		return recipe.ClosedChan
	}
	if h.done == nil {
		h.done = make(chan struct{})
		if releaseReason(h) == telemetry.ReleaseLost {
			// A member is lost already: say so now, not once a goroutine
			// has run. An outer multi-lock checks a nested one's Lost
			// without waiting before it hands out its set.
			close(h.lost)
			close(h.done)
		} else {
			go h.watch()
		}
	}
	return h.lost
}

// watch closes lost when any member's Lost channel closes, until stop: one
// goroutine, whatever the number of members.
func (h *holding) watch() {
	defer close(h.done)
	cases := make([]reflect.SelectCase, 0, len(h.members)+1)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(h.stop)})
	for _, ch := range h.members {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
	}
	if chosen, _, _ := reflect.Select(cases); chosen > 0 {
		close(h.lost)
	}
}
