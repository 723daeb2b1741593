// Package atomic holds Curator's atomic values for Go (Curator's
// recipes.atomic): Long (DistributedAtomicLong), Int
// (DistributedAtomicInteger) and Value (DistributedAtomicValue), counters
// and byte values in one node that any number of processes change by
// compare-and-set, never losing an update; and CachedLong and CachedInt
// (CachedAtomicLong, CachedAtomicInteger), ids handed out from ranges
// reserved on such a counter.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// # ZooKeeper layout and encoding (Curator's)
//
// One persistent node at the path, its parents made as containers. A
// Long holds 8 bytes, big-endian two's complement (Java's
// ByteBuffer.putLong), an Int 4 bytes (putInt), a Value the raw bytes; so
// a Java DistributedAtomicLong and a Go Long on one path share one
// counter, and their increments add up exactly. A missing node, or one
// with no data, reads as 0; fewer bytes than the width is
// curator.ErrCorrupt; more are ignored.
//
// # How a change is made
//
// Each operation reads the node and writes the new value over the version
// read (a create if the node is missing). A write another writer beat
// fails on the version, and the operation tries again as its retry
// policy allows (WithRetryPolicy; Curator's retryPolicy argument). With
// WithoutFirstRead, an object that knows the node as it last read or
// wrote it makes its first try over that, with no read first (see that
// option for the node it must never meet). With
// WithPromotedToLock (Curator's PromotedToLock), an operation whose
// optimistic tries all lost takes a locks.Mutex on the lock path (the
// layout of Curator's InterProcessMutex) and tries again under it, as the
// lock's policy allows (WithPromotedRetryPolicy), waiting for the lock at
// most WithPromotedTimeout. Every call returns a Result (Curator's
// AtomicValue): Succeeded, PreValue and PostValue, and Stats (optimistic
// and promoted tries and times); an operation not applied also returns
// an error saying why: curator.ErrContention when the tries ran out,
// curator.ErrCorrupt when the node holds no counter.
//
// # Exactly once
//
// A write is sent once (framework.WithSendOnce): if its reply is lost,
// the node is read again. Not applied (the node at the version the write
// expected), it is sent again; applied by another writer (other bytes,
// one version on), it is a conflict; else the write may be ours, and the
// call returns an error wrapping curator.ErrConnectionLoss, neither
// Succeeded nor "not applied". Curator's retry loop re-sends the write,
// fails on the version its own success moved, and adds again: an
// increment counted twice. So a Succeeded result was applied exactly
// once, and any other error but that one means nothing was written.
//
// # Metrics
//
// curator.atomic.retries counts writes tried again after a conflict, and
// curator.atomic.promotions operations promoted to the lock (framework's
// package documentation lists every metric).
package atomic
