// Package barrier holds Curator's barrier recipes for Go: Barrier
// (DistributedBarrier) and DoubleBarrier (DistributedDoubleBarrier, the
// ZooKeeper "double barrier" recipe). Both keep Curator's ZooKeeper layout,
// so Go and Java processes can share a barrier.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// # Barrier
//
// A Barrier is up while one node exists:
//
//	/path        persistent, parents made as containers
//
// Set creates it, Remove deletes it, and Wait blocks while it exists. Wait
// sets a getData watch on the node, never an exists watch: on a missing
// node getData fails and leaves nothing on the server, where exists would
// leave a watch that stays until someone creates the node.
//
// # DoubleBarrier
//
// Members synchronize the start and the end of a computation: Enter blocks
// until memberQty members have entered, Leave until all have left.
//
//	/path/_c_<uuid>-member  one ephemeral node per member (protected;
//	                        Curator's are a bare UUID, and count alike)
//	/path/ready             persistent; exists once memberQty members were counted
//
// Enter creates the member's node (parents as containers) and counts the
// children other than "ready"; the member that counts memberQty creates
// "ready" (and is in once that is known done, even if its context ended
// meanwhile), and "ready" existing lets everyone through. Waiting members
// hold a child watch on /path: it tells them of new members and of
// "ready" alike, and every wake-up counts again, so a spurious one lets no
// one through early. Leave follows the recipe: the lowest member (by name)
// waits for the highest to go, every other member deletes its node and
// waits for the lowest, so the lowest leaves last; then "ready" is
// deleted (also by a Leave that gives up, as on Curator's timeout, but
// not by one that fails because its node vanished). Every wait is
// bounded by the caller's context; a member that gives up, in Enter or in
// Leave, deletes its node before it returns (in
// the background if its session is lost or its client disconnected, or
// once its create's outcome is known if the create was under way), and
// a member whose session is lost is told (the errors wrap
// curator.ErrSessionLost).
//
// A path can serve round after round: Leave returns only once every member
// that was in the barrier has left, deletes only its own round's "ready"
// (the member that makes "ready" also rewrites /path's data as it is, in
// the same transaction, and the delete checks that version), and does not
// wait for members of the next round. A "ready" node left
// behind by a round whose members all crashed lets the next Enter through
// at once, as in Curator; delete it by hand if that happens.
//
// The server cannot be asked to drop a watch (go-zookeeper has no
// removeWatches): a waiter that gives up stops waiting at once and
// nothing of it stays in the client, but a watch it set on a node that
// still exists stays on the server until that node changes or goes. The
// recipes are written so that this is rare and bounded: Barrier.Wait
// watches only an existing barrier node (gone when the barrier is
// removed), and a member that gives up in Enter fires its own child watch
// by deleting its node.
package barrier
