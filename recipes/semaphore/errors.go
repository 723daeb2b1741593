package semaphore

import (
	"errors"

	"github.com/gocurator/curator/recipes/locks"
)

var (
	// ErrInvalidArgument: nil client, invalid path, a maximum or count < 1.
	ErrInvalidArgument = errors.New("semaphore: invalid argument")
	// ErrNotHeld: returning a lease twice, or unlocking a Mutex not held.
	// It is locks.ErrNotHeld: "not held" is one error across the recipes.
	ErrNotHeld = locks.ErrNotHeld
	// ErrForeignLease: a lease returned to a semaphore it does not belong to.
	ErrForeignLease = errors.New("semaphore: lease of another semaphore")
	// ErrNoLease: TryAcquire found no lease free now.
	ErrNoLease = errors.New("semaphore: no lease available")
)
