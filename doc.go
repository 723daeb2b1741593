// Package curator is the root of gocurator, Apache Curator's framework and
// coordination recipes rebuilt for Go on Apache ZooKeeper. It holds what
// every package of the module shares: the error vocabulary (Curator's
// exceptions), the Locker interface (Curator's InterProcessLock) and the
// SuspendPolicy (Curator's ConnectionStateErrorPolicy). The client and the
// recipes live in their own packages:
//
//   - framework: the client (CuratorFramework): connection states, the
//     retry loop, protected creates, guaranteed deletes, namespaces, and
//     the OpenTelemetry providers that it and its recipes record metrics
//     and traces with ("Metrics and traces" there lists them);
//   - retry: retry policies (RetryPolicy: ExponentialBackoffRetry,
//     RetryNTimes and the others of org.apache.curator.retry);
//   - recipes/locks: Mutex and ReadWriteLock, Revoke (InterProcessMutex,
//     InterProcessReadWriteLock, Revoker);
//   - recipes/semaphore: Semaphore with leases, Mutex on one lease
//     (InterProcessSemaphoreV2 and its Lease, InterProcessSemaphoreMutex);
//   - recipes/shared: Value and Count, bytes and an int shared through one
//     watched node (SharedValue, SharedCount);
//   - recipes/atomic: Long, Int and Value, counters and values changed by
//     compare-and-set, optionally promoted to a lock
//     (DistributedAtomicLong, DistributedAtomicInteger,
//     DistributedAtomicValue);
//   - recipes/multilock: several locks as one (InterProcessMultiLock);
//   - recipes/barrier: Barrier and DoubleBarrier (DistributedBarrier,
//     DistributedDoubleBarrier);
//   - recipes/leader: leader election: Election (Campaign, Resign,
//     Observe), Latch and Selector (LeaderLatch, LeaderSelector);
//   - recipes/cache: Cache, a node and its subtree kept up to date
//     (CuratorCache, NodeCache, PathChildrenCache, TreeCache);
//   - recipes/nodes: PersistentNode, a node kept while its owner lives
//     (PersistentNode, PersistentEphemeralNode);
//   - testing/zktest: real ZooKeeper servers, ensembles and a fault proxy
//     for tests (curator-test's TestingServer, TestingCluster and
//     KillSession).
//
// Every recipe writes Curator's node layout, so Go and Java processes share
// a lock, a semaphore, a barrier or an election on the same path.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// # Errors
//
// Every error of the module wraps one of the sentinels below (or a
// context's error, or one of go-zookeeper's sentinels such as zk.ErrNoNode)
// with the context of the call: test errors with errors.Is. Bad input is
// refused before any I/O with an error wrapping ErrInvalidArgument, and
// changes nothing.
//
// # Holding and losing
//
// A lock or a lease lives in an ephemeral node, so it lives as long as its
// session. A holder is told when it may no longer rely on it: Lost() is
// closed and the held context (from Acquire or Do) is cancelled with cause
// ErrLockLost, when the session is lost or, under LoseOnSuspend (the
// default), as soon as the connection is suspended. FencingToken and
// GuardedMulti protect what a stale holder could still touch.
//
// # Releasing
//
// One rule for every release (Unlock, Lease.Release, MultiLock.Unlock):
//
//   - nil: the holding is released, and its node is deleted or its delete
//     is guaranteed to finish in the background (retried on every
//     reconnection until done; the node goes with its session in any case).
//     There is nothing for the caller to do.
//   - an error wrapping ErrLockLost: the holding had been lost before the
//     release (its session was lost or suspended, or its node was found
//     already gone). It is released locally all the same, but what it
//     protected may have been held by another meanwhile: the caller must
//     act (roll back, compensate, report).
//   - an error wrapping ErrNotHeld or ErrInvalidArgument: misuse (released
//     twice, never held, nil context); nothing changed.
//   - any other error: the server refused the delete (zk.ErrNoAuth, say), so
//     the node stays until its session ends, and others wait behind it.
//
// Do (locks.Mutex.Do) follows the same rule and joins a loss to the error
// of the function it ran.
package curator
