package curator

import "context"

// Locker is what every lock of this module satisfies (Curator's
// InterProcessLock): locks.Mutex, both halves of locks.ReadWriteLock,
// semaphore.Mutex and multilock.MultiLock. A multilock.MultiLock takes any
// Lockers.
type Locker interface {
	// Lock blocks until the lock is held or ctx is done.
	Lock(ctx context.Context) error
	// Unlock releases the lock (see "Releasing" in the package
	// documentation for what its error means).
	Unlock(ctx context.Context) error
	// IsAcquiredInThisProcess reports whether this instance holds the lock.
	IsAcquiredInThisProcess() bool
	// Lost returns a channel closed when the lock held now is lost (closed
	// at once when not held).
	Lost() <-chan struct{}
}

// SuspendPolicy says when a holding (a lock, a lease) counts as lost
// (Curator's ConnectionStateErrorPolicy). Every recipe that holds takes it
// as an option (WithSuspendPolicy).
type SuspendPolicy int

const (
	// LoseOnSuspend (the default): a holding counts as lost as soon as its
	// connection is SUSPENDED, before the session may have expired on the
	// server. Another process can take over only once the server expires the
	// session, which comes later, so the holder learns first. This is
	// Curator's StandardConnectionStateErrorPolicy.
	LoseOnSuspend SuspendPolicy = iota
	// LoseOnLost: only a LOST session counts (Curator's
	// SessionConnectionStateErrorPolicy). A partitioned client declares its
	// session lost once the session timeout has passed since it sent the
	// last request the server answered (framework.Session), no later than
	// the server can expire the session, so the holder is told before
	// another process can hold, but for the scheduling of the news (Curator
	// counts from its noticing the disconnect, up to two thirds of the
	// timeout later, while another process may hold). A process paused
	// longer (a GC pause, a stopped VM) learns late all the same: use
	// fencing tokens.
	LoseOnLost
)

func (p SuspendPolicy) String() string {
	switch p {
	case LoseOnSuspend:
		return "LoseOnSuspend"
	case LoseOnLost:
		return "LoseOnLost"
	}
	return "SuspendPolicy(?)"
}
