// Package leader holds Curator's leader election recipes for Go: Latch
// (LeaderLatch), Selector (LeaderSelector), and Election, the same election
// in Go's shape (Campaign, Resign, Observe; etcd's concurrency.Election
// without its pitfalls).
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// # ZooKeeper layout (Curator's, so Go and Java participants share an election)
//
//	<path>/_c_<uuid>-latch-0000000042    Latch and Election (LeaderLatch)
//	<path>/_c_<uuid>-lock-0000000043     Selector (LeaderSelector: an InterProcessMutex)
//
// Each participant makes one protected ephemeral-sequential node holding its
// participant id (UTF-8); the path's parents are container nodes. Nodes are
// ordered by their sequence alone; the first leads. A participant waits on
// the one node before its own (a getData watch: no herd, nothing left on a
// vanished node), and re-reads the line, never starting over, when that
// node is gone before it could watch it (CURATOR-645).
//
// # What Curator's users ran into, designed out
//
//   - One goroutine owns each participant's state; every change of course
//     (an attempt to lead, a term's end, Resign, Close) starts a new
//     generation, and a report from an older one is inert. Curator's latch
//     let callbacks on two threads race on its node: node storms, and two
//     leaders after a reconnect (CURATOR-504, -620, -644, -653, -444).
//   - A participant claims leadership only after the server confirms that
//     its node exists and is an ephemeral of its current, live session
//     (CURATOR-696; and a protected create never adopts a node of a session
//     declared lost, CURATOR-498).
//   - The leader watches its own node: if someone deletes it, its term ends
//     at once, instead of two leaders (CURATOR-49). If the whole path is
//     deleted (an operator, a wiped ensemble), everyone takes part again
//     with new nodes (CURATOR-724).
//   - Leadership ends the moment it can no longer be relied on: the term's
//     context is cancelled on SUSPENDED (curator.LoseOnSuspend, the
//     default, before the server may expire the session) or on LOST
//     (curator.LoseOnLost), with a cause wrapping curator.ErrLockLost, and
//     never silently (CURATOR-220). FencingToken (the leader node's czxid,
//     strictly increasing from leader to leader) and GuardedMulti (writes
//     checked against the leader's node) protect what a stale leader could
//     still touch.
//   - Failed attempts to take part are retried with a pause and reported,
//     never dropped (CURATOR-15, -195); "requeue" is a new campaign, never
//     a shared task slot (CURATOR-73, -518, -671).
//
// # Participant ids
//
// Ids are required and non-empty (Curator allows "", and then writes empty
// data: a leader nobody can name). Participants of other processes with
// empty ids are read as "".
package leader
