package driver

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/gocurator/curator"
)

// Decision is what a Predicate says about our contender node.
type Decision struct {
	// Held: we hold the lock (or lease).
	Held bool
	// Watch names the contender (a child of the lock path) to wait on, with
	// a getData watch, when not held. Empty with Held false means: wait for
	// any change among the lock path's children (the semaphore's lease wait).
	Watch string
	// Onward: once Watch is gone, decide again on the same reading from
	// Watch's successor on, without reading the queue again, where the
	// waiter can prove its node still there (onward.go: the read lock's
	// waiter, whose decision only contenders made before it can change).
	Onward bool
}

// Predicate decides, from the contenders sorted by sequence and the place
// of ours among them, whether we hold the lock and, if not, what to wait
// for (Curator's LockInternalsDriver.getsTheLock). It is called with
// 0 <= ours < q.Len().
type Predicate func(q *Queue, ours int) (Decision, error)

// MaxLeases is the standard predicate (Curator's
// StandardLockInternalsDriver): the first maxLeases contenders hold; any
// other waits on the one node maxLeases places before it, so every node is
// watched by at most one waiter and a release wakes exactly one.
// maxLeases < 1 can never work: New refuses the predicate it returns, and
// that predicate, if called, returns an error wrapping
// curator.ErrInvalidArgument.
func MaxLeases(maxLeases int) Predicate {
	if maxLeases < 1 {
		return noLeases
	}
	if maxLeases == 1 {
		return firstHolds
	}
	return func(q *Queue, ours int) (Decision, error) {
		if ours < maxLeases {
			return Decision{Held: true}, nil
		}
		return Decision{Watch: q.Name(ours - maxLeases)}, nil
	}
}

// NoneBefore is the read lock's predicate (Curator's readLockPredicate):
// held unless a contender whose name contains name (a writer's) is queued
// before ours; else wait on the first such, and once it is gone decide
// onward (Decision.Onward). Contenders named name must only ever be made
// ephemeral-sequential (the read-write lock's writers, ours and Curator's:
// a downgrade makes a read node), else the onward decision could miss one
// made with a lower sequence (onward.go).
func NoneBefore(name string) Predicate {
	return func(q *Queue, ours int) (Decision, error) {
		for i := 0; i < ours; i++ {
			if strings.Contains(q.Name(i), name) {
				return Decision{Watch: q.Name(i), Onward: true}, nil
			}
		}
		return Decision{Held: true}, nil
	}
}

// firstHolds is MaxLeases(1): the mutex's predicate (the handoff knows it).
func firstHolds(q *Queue, ours int) (Decision, error) {
	if ours == 0 {
		return Decision{Held: true}, nil
	}
	return Decision{Watch: q.Name(ours - 1)}, nil
}

var errNoLeases = fmt.Errorf("driver: %w: MaxLeases needs at least 1", curator.ErrInvalidArgument)

// noLeases is what MaxLeases(n < 1) returns; New recognises it.
func noLeases(*Queue, int) (Decision, error) { return Decision{}, errNoLeases }

// isNoLeases reports whether pred is noLeases (a func is compared by its code).
func isNoLeases(pred Predicate) bool {
	return reflect.ValueOf(pred).Pointer() == reflect.ValueOf(noLeases).Pointer()
}
