// Package semaphore holds Curator's counting semaphore for Go: Semaphore
// (InterProcessSemaphoreV2) with Leases (Lease) and Mutex
// (InterProcessSemaphoreMutex). A semaphore's maximum can be a
// recipes/shared.Count (Curator's SharedCount, in recipes.shared there
// too), which lets it change at run time (NewWithSharedCount).
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// # ZooKeeper layout (Curator's, so Curator clients share the semaphore)
//
//	<path>/locks/_c_<uuid>-lock-<seq>      the internal lock: one acquirer at a time
//	<path>/leases/_c_<uuid>-lease-<seq>    one ephemeral-sequential node per lease
//
// Both are protected ephemeral-sequential nodes whose parents are container
// nodes, made through the one engine (internal/driver) that every lock-like
// recipe of this module shares. A shared.Count is one persistent node
// holding the count in 4 bytes, big-endian (Java's ByteBuffer.putInt).
//
// # The algorithm
//
// An acquirer takes the internal mutex, creates its lease node and, while
// the lease nodes number more than the maximum (Curator's count rule),
// waits for any change among the leases' children; it then releases the
// mutex. Only the one acquirer holding the internal mutex watches the
// leases: everyone else waits in the mutex's queue on one predecessor each,
// so a returned lease never wakes a herd. The waiter decides on the very
// read that set its watch (as Curator does), so no lease returned between
// a decision and the watch goes unseen. A waiter also looks again when a
// shared.Count maximum changes (it takes the change signal before reading
// the count).
//
// One step differs from Curator's, for speed, with the same guarantees: a
// waiter next in the internal mutex's queue that needs a round trip to
// confirm it now holds the mutex (usually it needs none: its process saw
// its predecessor go, and a mark proves its own node still there) starts
// its lease create the moment its predecessor goes, beside that round
// trip, rather than after it: the section each acquirer passes alone is
// one round trip shorter. The count rule alone keeps the leases
// within the maximum, so a node made that early is as safe as any; and a
// waiter that finds it does not hold the mutex after all (its predecessor
// had given up) deletes that node at once, so only the mutex's holder ever
// waits on the leases. Curator's acquirers on the same path may see such a
// node come and go.
//
// A lease lives in an ephemeral node: the server returns the
// lease of a process whose session dies, and Lease.Lost tells the holder.
//
// A Lease is a holding like a locks.Mutex's: a held context cancelled when
// it is lost (cause curator.ErrLockLost), a fencing token, guarded writes;
// Release never hides a loss (an error wrapping curator.ErrLockLost when the
// node was gone), and otherwise follows the module's release rule (package
// curator, "Releasing"). WithOnEnqueue shows a waiter's lease node while it
// waits.
//
// A lease node made by an acquire that then fails, times out or is
// cancelled is deleted before the call returns (CURATOR-335, CURATOR-462),
// so no orphan lease ever blocks the semaphore. If someone else deletes a
// waiting acquirer's node, it starts over with a new one (as Curator does,
// a few times at most); if its session is lost, the acquire fails with
// the wait's own error (curator.ErrNodeVanished wrapping
// curator.ErrSessionLost, as a locks.Mutex waiter's), never
// curator.ErrLockLost, which is for something held. The internal lock's
// holder watches its own lock node while it holds it: if someone else
// deletes it, the next acquirer takes the lock and waits for a lease too,
// so the holder deletes its lease node and starts over, rather than wait
// beside the other until neither fits (Curator's would both wait for ever).
// An acquire never returns a lease already lost (its connection suspended
// under LoseOnSuspend while the internal lock was being released): it
// returns it and starts over within ctx, or fails with the loss (an error
// wrapping curator.ErrLockLost) once it has started over a few times.
package semaphore
