// Package locks holds Curator's lock recipes for Go: Mutex
// (InterProcessMutex) and ReadWriteLock (InterProcessReadWriteLock), with
// its ReadLock and WriteLock halves, and Revoke (Revoker). Every lock
// satisfies curator.Locker (Curator's InterProcessLock).
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// # The algorithm and its ZooKeeper layout
//
// Each contender creates one protected ephemeral-sequential node under the
// lock path:
//
//	/path/_c_<uuid>-lock-0000000042          Mutex
//	/path/_c_<uuid>-__READ__0000000043       ReadWriteLock, read half
//	/path/_c_<uuid>-__WRIT__0000000044       ReadWriteLock, write half
//
// exactly as Curator names them, so Go and Java processes on the same path
// exclude each other. Contenders are ordered by the sequence suffix alone
// (the protection prefix does not count); children that are not contenders
// are ignored. The lowest holds the mutex; every waiter puts a getData watch
// on the single node just before its own (never exists, which would leave a
// watch behind on a node that has just gone; never the parent, which would
// wake every waiter at each release): a release wakes one waiter. A Mutex
// waiter that can prove every contender before it gone holds on its
// predecessor's deletion without reading the queue again (its own node
// proven by a watch on it: docs/design.md, "Handoff"). The lock path's
// parents are created as container nodes, so the server reaps a lock path
// nobody uses.
//
// The "_c_<uuid>-" prefix is Curator's protected mode: a create whose
// response was lost is found again by it instead of leaving an orphan, and a
// waiter that gives up deletes its node (a guaranteed delete, retried until
// done) before it returns.
//
// # Loss, fencing and guarded writes
//
// A lock lives in an ephemeral node, so it lives as long as the session:
// Lost is closed, and the context Do or Acquire handed out is cancelled,
// when the session is lost or (by default) the connection is suspended.
// FencingToken gives the creation zxid of the lock node (a downgraded
// read, which holds in its writer's place, gives its writer's), which
// strictly increases from holder to holder; GuardedMulti writes only while the lock
// node exists. Unlock follows the module's release rule (package curator,
// "Releasing"): nil once released, an error only for a loss (wrapping
// curator.ErrLockLost: the lock node was found gone, or the lock had been
// lost) or a misuse.
//
// WithOnEnqueue tells a caller its contender node as soon as it is made,
// while it still waits; Revoke (Curator's Revoker.attemptRevoke) asks a
// holder that armed WithRevocation (makeRevocable) to release.
package locks
