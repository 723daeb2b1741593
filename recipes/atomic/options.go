package atomic

import (
	"fmt"
	"time"

	"github.com/gocurator/curator"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/retry"
)

// Option configures a Value, a Long or an Int.
type Option func(*options)

type options struct {
	recipe.Options // its Fail and Apply (Data and the rest unused)
	policy         retry.Policy
	lockPath       string
	lockPolicy     retry.Policy
	lockTimeout    time.Duration
	lockGiven      bool // a WithPromoted* option other than WithPromotedToLock
	noFirstRead    bool
}

// WithoutFirstRead makes an operation's first try write over the node as
// this object last read or wrote it, without reading it first: one round
// trip instead of two while no one else wrote since (a writer that keeps
// winning, a counter with one writer at a time: 2-3x Curator's rate in
// the atomic bench); if someone did, that try loses on the version like
// any other. Off by default, because it decides on knowledge that can
// outlive the node: ZooKeeper's version check cannot tell a node deleted
// and made again from the one read, so a counter reset by an operator
// (deleted and made again) that its other writers brought back to the
// version this object last saw would take a write computed from the old
// value. Curator's read-then-write has that hole for one round trip; this
// option for as long as the object lives. Use it only where the node is
// never deleted while writers run (a write that lands on a node made again
// is logged). Attacked by TestFirstReadSeesANodeMadeAgain (off) and
// TestWithoutFirstReadOneRoundTrip (on).
func WithoutFirstRead() Option { return func(o *options) { o.noFirstRead = true } }

// DefaultRetryPolicy is the optimistic loop's policy when WithRetryPolicy
// is not given: up to 29 retries after a conflict, each after a random
// sleep from 1ms growing to at most 50ms (Curator takes one as a
// constructor argument, and has no default).
func DefaultRetryPolicy() retry.Policy {
	p, _ := retry.NewBoundedExponentialBackoff(time.Millisecond, 50*time.Millisecond, retry.MaxRetriesLimit)
	return p
}

// DefaultPromotedTimeout is how long a promoted operation waits for the
// lock unless WithPromotedTimeout says otherwise (Curator waits for ever
// by default; ctx still bounds the wait).
const DefaultPromotedTimeout = 10 * time.Second

// WithRetryPolicy sets the policy of the optimistic loop (Curator's
// retryPolicy argument): after a compare-and-set lost to another writer,
// whether and after what sleep to try again. Default DefaultRetryPolicy.
func WithRetryPolicy(p retry.Policy) Option {
	return func(o *options) {
		if p == nil {
			o.Fail("nil retry policy")
		}
		o.policy = p
	}
}

// WithPromotedToLock promotes an operation whose optimistic tries all
// lost to a lock (Curator's PromotedToLock.builder().lockPath(path)): it
// takes a locks.Mutex on lockPath, Curator's InterProcessMutex layout, so
// Java and Go writers promoted on the same path exclude each other, and
// tries again under it. Optimistic writers still race with it; the
// version check keeps that correct.
func WithPromotedToLock(lockPath string) Option {
	return func(o *options) {
		if err := framework.ValidatePath(lockPath); err != nil || lockPath == "/" {
			o.Fail("promoted lock path %q", lockPath)
		}
		o.lockPath = lockPath
	}
}

// WithPromotedRetryPolicy sets the policy of the tries under the lock
// (PromotedToLock's retryPolicy). Default: one try, no retry (Curator's
// RetryNTimes(0, 0)). Only with WithPromotedToLock.
func WithPromotedRetryPolicy(p retry.Policy) Option {
	return func(o *options) {
		o.lockGiven = true
		if p == nil {
			o.Fail("nil promoted retry policy")
		}
		o.lockPolicy = p
	}
}

// WithPromotedTimeout bounds the wait for the lock (PromotedToLock's
// timeout); past it the operation fails with curator.ErrContention.
// Default DefaultPromotedTimeout; the call's ctx bounds it too. Only with
// WithPromotedToLock.
func WithPromotedTimeout(d time.Duration) Option {
	return func(o *options) {
		o.lockGiven = true
		if d <= 0 {
			o.Fail("promoted lock timeout %v (must be positive)", d)
		}
		o.lockTimeout = d
	}
}

func buildOptions(opts []Option) (options, error) {
	o := options{lockTimeout: DefaultPromotedTimeout}
	if err := recipe.Apply(&o, opts); err != nil {
		return o, err
	}
	if o.lockGiven && o.lockPath == "" {
		return o, fmt.Errorf("%w: WithPromotedRetryPolicy or WithPromotedTimeout without WithPromotedToLock", curator.ErrInvalidArgument)
	}
	if o.policy == nil {
		o.policy = DefaultRetryPolicy()
	}
	if o.lockPolicy == nil {
		o.lockPolicy, _ = retry.NewNTimes(0, 0)
	}
	return o, nil
}
