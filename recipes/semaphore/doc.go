// Package semaphore holds Curator's counting semaphore for Go: Semaphore
// (InterProcessSemaphoreV2) with Leases, Mutex (InterProcessSemaphoreMutex),
// and SharedCount (SharedCount), which lets the maximum change at run time.
//
// # ZooKeeper layout (Curator's, so Curator clients share the semaphore)
//
//	<path>/locks/_c_<uuid>-lock-<seq>      a locks.Mutex: one acquirer at a time
//	<path>/leases/_c_<uuid>-lease-<seq>    one ephemeral-sequential node per lease
//
// An acquirer takes the internal mutex, creates its lease node and, while
// there are more lease nodes than the maximum, waits on the leases' children
// (only the one acquirer holding the internal mutex watches them: everyone
// else waits in the mutex queue on one predecessor each, so a release never
// wakes a herd); it then releases the mutex. Both steps go through the
// locks.Driver every lock-like recipe shares. A lease lives in an ephemeral
// node: the server returns the lease of a process whose session dies.
//
// A lease node created by an acquire that then fails, times out or is
// cancelled is deleted before the call returns (CURATOR-335, CURATOR-462), so
// no orphan lease ever blocks the semaphore.
package semaphore
