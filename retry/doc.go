// Package retry holds Apache Curator's retry policies (curator-client,
// org.apache.curator.retry) for the framework's retry loop.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// A [Policy] (Curator's RetryPolicy) decides whether a failed ZooKeeper
// operation is tried again and after how long. The framework asks it only
// about errors whose outcome is unknown rather than refused: connection
// loss, operation timeout, session moved and session expired (Curator's
// RetryLoop.isRetryException); every other error is returned at once.
// Policies never sleep: the retry loop sleeps, bounded by the caller's
// context, for the duration Next returns. One policy value serves every
// operation of a client at once, so policies keep no per-operation state.
//
// Curator's policies and their constructors here:
//
//	Curator                                       gocurator
//	ExponentialBackoffRetry(base, n[, max])       NewExponentialBackoff(base, n[, WithMaxSleep(max)])
//	BoundedExponentialBackoffRetry(base, max, n)  NewBoundedExponentialBackoff(base, max, n)
//	RetryNTimes(n, sleep)                         NewNTimes(n, sleep)
//	RetryOneTime(sleep)                           NewOneTime(sleep)
//	RetryUntilElapsed(maxElapsed, sleep)          NewUntilElapsed(maxElapsed, sleep)
//	RetryForever(sleep)                           NewForever(sleep)
//	(no retries)                                  Never
//
// Constructors reject what Curator rejects (RetryForever's sleep must be
// positive) and also what Curator takes unchecked: negative counts and
// durations, a non-positive exponential base and a maximum sleep below the
// base. Their errors wrap [curator.ErrInvalidArgument]; they never panic. Like
// Curator, they pin an exponential retry count above [MaxRetriesLimit] to
// it; Curator logs a warning then, this package cannot, so see
// [ExponentialBackoff.MaxRetries].
//
// Curator's exponential formula is not cenkalti/backoff's: Curator sleeps a
// uniformly random whole number of base units, base × max(1, rand(2^(n+1))),
// while backoff grows an interval by a multiplier and spreads it by a
// randomization factor. None of backoff's policies yields Curator's
// distribution, so the Curator policies are written out here, to sleep
// exactly as Curator does. [FromBackOff] plugs any backoff.BackOff in for
// those who prefer its shape.
package retry
