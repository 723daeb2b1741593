package locks

import "errors"

// Sentinel errors of the lock recipes; every error returned wraps one of
// these or a framework/ZooKeeper error, so errors.Is works.
var (
	// ErrNotHeld: Unlock of a lock this instance does not hold (Curator's
	// IllegalMonitorStateException "You do not own the lock").
	ErrNotHeld = errors.New("locks: not held")
	// ErrLocked: TryLock found the lock held by someone else.
	ErrLocked = errors.New("locks: held by another")
	// ErrLockLost: the lock was held but is no longer safe to rely on: its
	// session was lost (or, with the default policy, its connection suspended),
	// or its node was deleted by someone else.
	ErrLockLost = errors.New("locks: lock lost")
	// ErrNodeVanished: while waiting, our own contender node disappeared
	// (its session expired, or someone deleted it): waiting on is pointless
	// (CURATOR-527).
	ErrNodeVanished = errors.New("locks: our contender node vanished")
	// ErrUpgrade: a read lock holder asked for the write lock of the same
	// ReadWriteLock, which can never succeed (Curator: it would block forever).
	ErrUpgrade = errors.New("locks: cannot upgrade a read lock to a write lock")
	// ErrInvalidArgument: nil client, invalid path, bad option.
	ErrInvalidArgument = errors.New("locks: invalid argument")
)
