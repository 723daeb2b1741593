// Package inspect reads recipes as they stand in ZooKeeper, recognised by
// their node layout alone: Apache Curator's and gocurator's (which write the
// same names), so that an operator sees who holds a lock and who waits,
// whichever language made the nodes. It is the logic behind the gocurator
// command (cmd/gocurator), kept apart from it so that it can be tested
// without the binary.
//
// Read fetches a subtree (every node's stat and data, the children of every
// persistent node) into a Znode tree; Recognize turns a tree into Recipes
// (pure: no I/O), each with its holders and waiters in queue order;
// Take does both; Watch redraws on ZooKeeper child watches; Locate finds
// the recipe and role of one node (for revoke and release).
//
// What is recognised (names spelled in internal/layout, taken apart in
// parse.go):
//
//   - mutex: children "_c_<uuid>-lock-<seq>" (InterProcessMutex,
//     LeaderSelector, gocurator's locks.Mutex); the lowest sequence holds;
//   - read-write lock: "_c_<uuid>-__READ__<seq>" and "_c_<uuid>-__WRIT__<seq>"
//     in one queue ordered by sequence: a writer holds when no node has a
//     lower sequence, a reader when no writer has (a downgraded read node may
//     share its writer's sequence);
//   - semaphore: children "locks" (its internal mutex) and "leases"
//     ("_c_<uuid>-lease-<seq>"); the maximum is not stored in ZooKeeper, so
//     leases are listed in order, not split into granted and waiting;
//   - leader latch: "_c_<uuid>-latch-<seq>", data the participant id; the
//     lowest is the leader;
//   - double barrier: members ("_c_<uuid>-member", Curator's bare UUIDs) and
//     "ready";
//   - service (curator-x-discovery's ServiceDiscovery, gocurator's
//     discovery): every child a childless node whose data reads as a
//     service instance (Curator's JSON) with the child's name as its id
//     (or id and sequence, DYNAMIC_SEQUENTIAL); decided before the others,
//     as instance ids are UUIDs by default (a double barrier's member
//     names). ReadRegistry reads a registry's services whole (gocurator
//     services);
//   - group (GroupMember): every child an ephemeral childless node named by
//     a member id (not sequential, not protected);
//   - queue (DistributedQueue and its priority, delay and id forms,
//     SimpleDistributedQueue): every child a persistent childless node
//     "queue-...<seq>" (or every one "qn-<seq>"): its items, with the depth
//     and the oldest item's age; the same names ephemeral are a queue's
//     lock path (items being consumed);
//   - shared count: a persistent leaf with 4 bytes of data; atomic long: 8;
//   - barrier or plain node: any other leaf;
//   - unknown: a node with ephemeral (or protected) children of no known
//     layout.
//
// Contender names may also come without the protection prefix (as very old
// Curator versions made them); a "_c_" prefix without a real UUID (as
// go-zookeeper's zk.Lock makes) is not Curator's layout and shows as unknown.
// A node with persistent children only is a parent of recipes, not one
// itself: it is walked into, not listed (a queue's items excepted).
package inspect
