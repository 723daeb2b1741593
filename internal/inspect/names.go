package inspect

// The node names this package recognises, as Apache Curator's recipes (and
// gocurator's, which write the same layout) name their nodes. They are
// defined here, once: the recipes' own constants are not imported, so that
// this package reads any ZooKeeper tree by its layout alone.
const (
	// protectedPrefix starts a protected name: "_c_" + a UUID + "-" + name
	// (Curator's CreateBuilder.withProtection). framework.IsProtected and
	// framework.NormalizeName check and strip it.
	protectedPrefix = "_c_"

	// mutexName: InterProcessMutex, LeaderSelector (a mutex whose data is
	// the participant id), the semaphore's internal lock; gocurator's
	// locks.Mutex. "<path>/_c_<uuid>-lock-<seq>".
	mutexName = "lock-"

	// readName and writeName: InterProcessReadWriteLock's halves, in one
	// queue. "<path>/_c_<uuid>-__READ__<seq>", "<path>/_c_<uuid>-__WRIT__<seq>".
	readName  = "__READ__"
	writeName = "__WRIT__"

	// leaseName: InterProcessSemaphoreV2's leases, "<path>/leases/_c_<uuid>-lease-<seq>".
	leaseName = "lease-"

	// locksChild and leasesChild: the two children of a semaphore's path
	// ("<path>/locks" is its internal mutex, "<path>/leases" its leases).
	locksChild  = "locks"
	leasesChild = "leases"

	// latchName: LeaderLatch, "<path>/_c_<uuid>-latch-<seq>", data the
	// participant id.
	latchName = "latch-"

	// memberName: a gocurator DoubleBarrier member, "<path>/_c_<uuid>-member"
	// (Curator's DistributedDoubleBarrier members are bare UUIDs).
	memberName = "member"

	// readyNode: a double barrier's "<path>/ready", made once enough
	// members entered.
	readyNode = "ready"

	// seqLen is the length of a sequence suffix: ZooKeeper's "%010d".
	seqLen = 10

	// revokeMessage is what a revocation request (Curator's
	// Revoker.attemptRevoke, gocurator's locks.Revoke) writes into a
	// holder's node.
	revokeMessage = "__REVOKE__"

	// sharedCountLen is the data length of a SharedCount (a big-endian int32).
	sharedCountLen = 4
)
