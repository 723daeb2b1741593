// Package multilock holds Curator's InterProcessMultiLock for Go: several
// locks held as one.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// A MultiLock is built from any curator.Locker values (New) — mutexes, either
// half of a ReadWriteLock, semaphore mutexes, other MultiLocks — or from
// paths, for which it makes locks.Mutex members (NewFromPaths). It is itself
// a curator.Locker.
//
// # The recipe
//
// Lock takes the members one after the other, in the order given. The
// caller's context is one deadline for the whole acquisition (Curator gives
// each member the full timeout, so n members can take n times as long). If
// a member cannot be had before the context is done, or fails, every member
// already taken in this attempt is released, in reverse order, and Lock
// returns a *MemberError naming the member that failed (its index and, if it
// has one, its Path) and wrapping the cause, so errors.Is(err,
// context.DeadlineExceeded) or errors.Is(err, curator.ErrLocked) work. Nothing
// is left held or half-held. If a member taken early was lost (its session
// expired, say) while Lock waited for a later one, Lock fails the same way
// with an error wrapping curator.ErrLockLost rather than return a set that is
// no longer whole.
//
// Unlock releases every member in reverse order, tries each even when
// another fails, and returns every failure joined with errors.Join, each a
// *MemberError (Curator keeps only the first). A member whose release failed
// is reported, and the others are released all the same.
//
// Lost returns a channel closed when any member is lost while the
// multi-lock is held. It costs one goroutine per holding, started by the
// first call to Lost and ended by Unlock.
//
// # Deadlock
//
// Processes that take overlapping sets of locks in the same order cannot
// deadlock: of two contenders for the same sets, whichever gets the first
// lock they share is never waiting for anything the other holds, so it gets
// the rest in turn and releases them; with one global order this holds for
// any number of processes and sets. Sort paths, or keep one fixed list.
//
// With different orders (one process takes A then B, another B then A) each
// can hold its first lock and wait forever for the other's. A deadline on
// the context ends that wait: the process whose deadline passes releases
// the lock it took, which lets the other go on, and nothing stays held (see
// ExampleMultiLock_differentOrders). Both may time out; retry with jitter,
// or better, use one order.
//
// # Reentrancy
//
// A MultiLock re-enters exactly when all its members do. A locks.Mutex
// re-enters only with a context that its own Acquire or Do handed out, and
// Lock passes its context to every member, so a multi-lock of mutexes
// re-enters only with a context carrying holds of all of them; a
// semaphore.Mutex never re-enters (a second Lock waits for an Unlock). When
// Lock re-enters, the MultiLock counts it: n successful Locks need n
// Unlocks, and each Unlock releases every member once. A Lock that cannot
// re-enter waits like any other contender and, at its deadline, gives back
// only what it took in that attempt; the holding it waited on is unchanged.
//
// # TryLock
//
// TryLock takes every member with the member's own TryLock (no waiting on
// other holders; the context bounds the ZooKeeper calls) and rolls back as
// Lock does; a member held elsewhere gives an error wrapping
// curator.ErrLocked. It needs every member to offer TryLock(ctx) error: if one
// does not, TryLock takes nothing and returns an error wrapping
// errors.ErrUnsupported that names it.
package multilock
