// Package layout names Apache Curator's ZooKeeper node layouts, once: the
// recipes write them (so Go and Java processes share a recipe) and the
// inspect tool reads them. Contender nodes are protected:
// "<path>/_c_<uuid>-<name><seq>", seq ZooKeeper's ten digits.
package layout

const (
	// MutexName: InterProcessMutex (locks.Mutex), the semaphore's internal
	// lock and LeaderSelector: "<path>/_c_<uuid>-lock-<seq>".
	MutexName = "lock-"

	// ReadName and WriteName: InterProcessReadWriteLock's halves, in one
	// queue ordered by sequence only (equal lengths, as Curator's).
	ReadName  = "__READ__"
	WriteName = "__WRIT__"

	// LeaseName, LocksChild and LeasesChild: InterProcessSemaphoreV2,
	// "<path>/locks/_c_<uuid>-lock-<seq>" (its internal lock) and
	// "<path>/leases/_c_<uuid>-lease-<seq>".
	LeaseName   = "lease-"
	LocksChild  = "locks"
	LeasesChild = "leases"

	// LatchName: LeaderLatch, "<path>/_c_<uuid>-latch-<seq>", its data the
	// participant id.
	LatchName = "latch-"

	// MemberName and ReadyNode: a double barrier's members (gocurator's are
	// protected, "<path>/_c_<uuid>-member"; Curator's are bare UUIDs) and
	// its "<path>/ready".
	MemberName = "member"
	ReadyNode  = "ready"

	// RevokeMessage is what a revocation request (Curator's
	// Revoker.attemptRevoke) writes into a holder's node
	// (LockInternals.REVOKE_MESSAGE).
	RevokeMessage = "__REVOKE__"

	// SeqLen is the length of a sequence suffix (ZooKeeper's "%010d").
	SeqLen = 10

	// SharedCountLen is the data length of a SharedCount (a big-endian
	// int32).
	SharedCountLen = 4

	// QueueItemName and SimpleQueueName: DistributedQueue's item nodes and
	// its priority, delay and id forms (recipes/queue),
	// "<path>/queue-[<priority>|'|'<delay or id>'|']<seq>", persistent;
	// the same names made ephemeral under a lock path are claims on items
	// being consumed. SimpleDistributedQueue's: "<path>/qn-<seq>".
	QueueItemName   = "queue-"
	SimpleQueueName = "qn-"

	// AtomicLongLen is the data length of a DistributedAtomicLong
	// (recipes/atomic.Long: a big-endian int64).
	AtomicLongLen = 8
)
