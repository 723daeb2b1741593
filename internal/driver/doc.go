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
//
// A contender's create reads the queue behind it, in the same round trip
// (driver.go, createOptions): its first decision needs no request of its
// own. One shortcut of the mutex's queue (one contender name, first
// holds) saves a request no peer saves, with its proof in its file: the
// handoff (handoff.go), a waiter holding on its predecessor's deletion
// with no request when its client knows every contender before it gone
// (records bound to one incarnation of the lock path; its own node proven
// by a mark, set only where a handoff may come). One shortcut of the read
// lock's: onward (onward.go), a reader whose writer goes deciding on the
// rest of the reading it waited with, since no writer can be made before
// it. Every shortcut's invariant and attacking tests: docs/design.md;
// what each buys: docs/performance.md.
package driver
