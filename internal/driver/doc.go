// Package driver is the one engine behind every lock-like recipe of the
// module (Curator's LockInternals with its LockInternalsDriver): the mutex,
// both halves of the read-write lock, the semaphore's internal lock and
// leases. It is internal: users see the recipes, never this.
//
// Each contender creates one protected ephemeral-sequential node
// "<path>/_c_<uuid>-<name><seq>" (parents made as container nodes, so the
// server reaps a lock path nobody uses); contenders sort by their sequence
// suffix alone; a Predicate decides from that order who holds; a waiter
// puts a getData watch (never exists) on the one node the Predicate names,
// or, for a wait on any change (the semaphore), decides on the watched
// getChildren itself. A Hold is one holding of a contender: the held
// context, the Lost channel, the fencing token, guarded writes and the
// release, one rule for every recipe.
package driver
