package curator

import "errors"

// The error vocabulary of the module: one sentinel per meaning, defined here
// once. The framework and every recipe wrap them with their own context (the
// operation, the path, the node), so test an error with errors.Is, never by
// its text. Errors of ZooKeeper itself keep go-zookeeper's sentinels in their
// chain (errors.Is(err, zk.ErrNoNode)).
var (
	// ErrInvalidArgument: input refused before any I/O, and nothing changed:
	// a nil client, context, function or lock; a count, timeout or maximum
	// out of range; an option that does not apply; a lease of another
	// semaphore. Every ErrInvalidPath is also an ErrInvalidArgument.
	ErrInvalidArgument = errors.New("invalid argument")

	// ErrInvalidPath: a path ZooKeeper would refuse (empty, relative, with
	// an empty, "." or ".." component, a trailing slash, a forbidden
	// character), or one a recipe cannot use ("/"). It is an
	// ErrInvalidArgument too.
	ErrInvalidPath error = invalidPath{}

	// ErrClosed: the client was closed (every call, wait and background
	// operation on it ends with it), or the recipe object the call was made
	// on was (a leader Election, Latch or Selector, a shared Value or
	// Count).
	ErrClosed = errors.New("closed")

	// ErrConnectionLoss: the outcome of an operation is unknown because the
	// connection to ZooKeeper was lost (ZooKeeper's CONNECTIONLOSS); the
	// retry loop retries it, and it reaches the caller once the retry policy
	// gives up.
	ErrConnectionLoss = errors.New("connection loss")

	// ErrOperationTimeout: ZooKeeper's OPERATIONTIMEOUT, retried like
	// ErrConnectionLoss.
	ErrOperationTimeout = errors.New("operation timeout")

	// ErrSessionLost: the ZooKeeper session an operation, a wait or a
	// holding depended on expired or was declared lost; its ephemeral nodes
	// are gone or going.
	ErrSessionLost = errors.New("session lost")

	// ErrDeletePending: a guaranteed delete (framework.WithGuarantee) could
	// not be confirmed in the foreground and goes on in the background;
	// errors.As the error into *framework.DeletePendingError to wait for it.
	// Recipes never return it: a release whose delete is pending succeeds
	// (see the package documentation, "Releasing").
	ErrDeletePending = errors.New("delete pending in background")

	// ErrLocked: a Try call (TryLock, TryAcquire) found the lock held by
	// another, or no lease free, and did not wait.
	ErrLocked = errors.New("held by another")

	// ErrNotHeld: a release of something this instance does not hold or is
	// not in: Unlock of a lock not held, a lease returned twice, Leave of a
	// double barrier not entered; or a call that needs the holding
	// (FencingToken, GuardedMulti) without it.
	ErrNotHeld = errors.New("not held")

	// ErrLockLost: a holding (a lock, a lease) can no longer be relied on:
	// its session was lost (or, under curator.LoseOnSuspend, its connection
	// suspended), or its node was deleted by someone else. Whatever it
	// protected may have been taken by another holder meanwhile.
	ErrLockLost = errors.New("lock lost")

	// ErrNodeVanished: while waiting (for a lock, a lease, a barrier), our
	// own node disappeared: its session expired (the error then also wraps
	// ErrSessionLost) or someone deleted it; waiting on is pointless
	// (CURATOR-527).
	ErrNodeVanished = errors.New("our node vanished")

	// ErrUpgrade: a read lock holder asked for the write lock of the same
	// read-write lock, which can never be granted (Curator blocks forever).
	ErrUpgrade = errors.New("cannot upgrade a read lock to a write lock")

	// ErrBusy: a call that the object allows once at a time is already
	// under way or done: DoubleBarrier.Enter while entering, in or leaving
	// the barrier; a second Start of a leader Latch or Selector or of a
	// shared Value or Count; Election.Campaign while another Campaign of the same
	// Election waits.
	ErrBusy = errors.New("already in use")

	// ErrPanic: a function the caller gave a recipe to run in the
	// background panicked (a leader Selector's function); the recipe
	// recovered it, and the error carries the panic's value and stack
	// (errors.As it into *leader.PanicError).
	ErrPanic = errors.New("panicked")

	// ErrCorrupt: a node's data is not in the format its recipe reads and
	// writes (Curator's "Corrupted data for node"): a queue item not in
	// Curator's ItemSerializer format or refused by its Serializer, a
	// DistributedAtomicLong of fewer than 8 bytes, an Integer of fewer than
	// 4, a SharedCount not of 4. Nothing the caller passed is wrong; the node
	// was written by something else.
	ErrCorrupt = errors.New("corrupt data")

	// ErrContention: an optimistic compare-and-set (recipes/atomic's
	// TrySet, Increment...) lost to other writers every time its retry
	// policy allowed, and (if promoted to a lock) the lock was not had in
	// time or the writes under it lost too: nothing was written (Curator's
	// succeeded() false). Try again later, or with a patient policy.
	ErrContention = errors.New("contention: compare-and-set retries exhausted")

	// ErrUnimplemented: the server does not implement the request
	// (ZooKeeper's UNIMPLEMENTED): a persistent watch (addWatch) asked of a
	// server before ZooKeeper 3.6. A caller with another way falls back to
	// it (recipes/cache uses one-shot watches then).
	ErrUnimplemented = errors.New("not implemented by the server")
)

// invalidPath is ErrInvalidPath: a kind of ErrInvalidArgument.
type invalidPath struct{}

func (invalidPath) Error() string        { return "invalid path" }
func (invalidPath) Is(target error) bool { return target == ErrInvalidArgument }
