// Package queue holds Curator's queue recipes for Go: Simple
// (SimpleDistributedQueue), Queue (DistributedQueue), Priority
// (DistributedPriorityQueue), Delay (DistributedDelayQueue) and IDQueue
// (DistributedIdQueue), on Curator's node layouts and item bytes, so that
// a Java producer feeds a Go consumer and the reverse during a migration.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// # Layouts
//
//	<path>/qn-NNNNNNNNNN                Simple: the item's bytes as they are
//	<path>/queue-NNNNNNNNNN             Queue
//	<path>/queue-<priority>NNNNNNNNNN   Priority (PriorityString: 9 characters)
//	<path>/queue-|<until>|NNNNNNNNNN    Delay (DelayString: epoch ms in hex)
//	<path>/queue-|<id>|NNNNNNNNNN       IDQueue
//	<lock path>/<item name>             the ephemeral lock of an item being consumed (WithLockPath)
//
// Items are persistent sequential nodes; a Queue's node holds Curator's
// ItemSerializer bytes (Encode, Decode): one item, or several put together
// by PutMulti. Children of the path with other names are left alone.
//
// # Delivery
//
// Without a lock path (Simple always; Queue, Priority, Delay and IDQueue
// by default), delivery is at most once: a consumer deletes an item before
// it consumes it, so an item whose consumer fails, or whose process dies,
// is lost, and never consumed twice. With WithLockPath, it is at least
// once: a consumer locks the item (an ephemeral node named after it under
// the lock path), consumes it, and deletes it only once its consumer
// returned nil; a consumer process that dies mid-item loses the lock with
// its session, and another consumer takes the item again (so an item may
// be consumed twice: make consumers idempotent). Both are proven by
// TestDeliveryUnderSIGKILL: 8 producer and 8 consumer processes, consumers
// killed with SIGKILL while they hold an item.
//
// Puts are at least once too: a put whose reply was lost is retried and may
// leave the item twice (a protected name would fix it, but Curator's
// consumers would skip it as a foreign node).
//
// # ZooKeeper makes a bad queue (Curator's Tech Note 4)
//
// Every consumer lists the whole queue path at each change, so N items
// cost O(N²) bytes read; and a listing must fit in one reply (the client's
// jute.maxbuffer, 1 MB by default): past about 52,000 queue-NNNNNNNNNN
// children (36,000 priority names, 31,000 delay names, 61,000 qn- names)
// no consumer can list the path, and every recipe on it stops. Bound the
// queue with WithMaxItems well below that, keep items small (a node holds
// at most jute.maxbuffer), and prefer a real message broker for volume.
// A sequence number past 2³¹−1 breaks the order: recreate a path before
// 10⁹ items went through it.
package queue
