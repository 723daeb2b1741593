package retry

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gocurator/curator"
)

// Policy decides whether a failed ZooKeeper operation is tried again
// (Curator's RetryPolicy).
type Policy interface {
	// Next is called after the attempt numbered retryCount (0 for the first retry decision) failed
	// with a retryable error, elapsed after the first attempt began. It returns how long to
	// sleep before the next attempt and whether to retry at all. It must be safe for concurrent use.
	Next(retryCount int, elapsed time.Duration) (sleep time.Duration, ok bool)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("retry: %w: "+format, append([]any{curator.ErrInvalidArgument}, args...)...)
}

// MaxRetriesLimit is Curator's MAX_RETRIES_LIMIT: an exponential policy's
// retry count above it is pinned to it, which keeps 1<<(retryCount+1)
// positive.
const MaxRetriesLimit = 29

// ExponentialBackoff is Curator's ExponentialBackoffRetry, and with a
// maximum sleep its BoundedExponentialBackoffRetry. Retry n (from 0) is
// allowed while n < maxRetries and sleeps
//
//	min(maxSleep, base × max(1, rand.IntN(1 << (n+1))))
//
// so a sleep lies in [base, base × (2^(n+1) - 1)]. Without a maximum sleep
// the cap is the largest time.Duration, where a product that would overflow
// saturates.
type ExponentialBackoff struct {
	base, maxSleep time.Duration
	maxRetries     int
	intN           func(int) int // rand.IntN; tests replace it
}

// ExponentialOption configures NewExponentialBackoff.
type ExponentialOption func(*ExponentialBackoff)

// WithMaxSleep caps every sleep at d (Curator's maxSleepMs argument); d must
// be at least the base sleep.
func WithMaxSleep(d time.Duration) ExponentialOption {
	return func(e *ExponentialBackoff) { e.maxSleep = d }
}

// NewExponentialBackoff returns Curator's ExponentialBackoffRetry(base,
// maxRetries[, maxSleep]). base must be positive, maxRetries not negative and
// a maximum sleep at least base. maxRetries above MaxRetriesLimit is pinned
// to it, as Curator does (with a warning there).
func NewExponentialBackoff(base time.Duration, maxRetries int, opts ...ExponentialOption) (*ExponentialBackoff, error) {
	e := &ExponentialBackoff{base: base, maxSleep: math.MaxInt64, maxRetries: maxRetries, intN: rand.IntN}
	for _, o := range opts {
		if o != nil {
			o(e)
		}
	}
	switch {
	case base <= 0:
		return nil, invalid("base sleep %v must be positive", base)
	case maxRetries < 0:
		return nil, invalid("max retries %d must not be negative", maxRetries)
	case e.maxSleep < base:
		return nil, invalid("max sleep %v must be at least the base sleep %v", e.maxSleep, base)
	}
	e.maxRetries = min(e.maxRetries, MaxRetriesLimit)
	return e, nil
}

// NewBoundedExponentialBackoff returns Curator's
// BoundedExponentialBackoffRetry(base, maxSleep, maxRetries): the exponential
// formula with every sleep capped at maxSleep, which must be at least base.
func NewBoundedExponentialBackoff(base, maxSleep time.Duration, maxRetries int) (*ExponentialBackoff, error) {
	return NewExponentialBackoff(base, maxRetries, WithMaxSleep(maxSleep))
}

// MaxRetries returns the retry count in force, after pinning at
// MaxRetriesLimit.
func (e *ExponentialBackoff) MaxRetries() int { return e.maxRetries }

// Next implements Policy.
func (e *ExponentialBackoff) Next(retryCount int, _ time.Duration) (time.Duration, bool) {
	if retryCount < 0 || retryCount >= e.maxRetries {
		return 0, false
	}
	units := max(1, e.intN(1<<(retryCount+1)))
	if time.Duration(units) > e.maxSleep/e.base { // also where base×units would overflow
		return e.maxSleep, true
	}
	return e.base * time.Duration(units), true
}

// NTimes is Curator's RetryNTimes (and RetryOneTime): retry n (from 0) is
// allowed while n < the count, each after the same sleep.
type NTimes struct {
	n     int
	sleep time.Duration
}

// NewNTimes returns Curator's RetryNTimes(n, sleep); n and sleep must not be
// negative.
func NewNTimes(n int, sleep time.Duration) (*NTimes, error) {
	if n < 0 {
		return nil, invalid("retry count %d must not be negative", n)
	}
	if sleep < 0 {
		return nil, invalid("sleep %v must not be negative", sleep)
	}
	return &NTimes{n: n, sleep: sleep}, nil
}

// NewOneTime returns Curator's RetryOneTime(sleep), which is
// RetryNTimes(1, sleep).
func NewOneTime(sleep time.Duration) (*NTimes, error) { return NewNTimes(1, sleep) }

// Next implements Policy.
func (p *NTimes) Next(retryCount int, _ time.Duration) (time.Duration, bool) {
	if retryCount < 0 || retryCount >= p.n {
		return 0, false
	}
	return p.sleep, true
}

// UntilElapsed is Curator's RetryUntilElapsed: any number of retries, each
// after the same sleep, allowed while elapsed < maxElapsed, elapsed being
// measured from the start of the operation's first attempt to the decision
// (before any sleep).
type UntilElapsed struct {
	maxElapsed, sleep time.Duration
}

// NewUntilElapsed returns Curator's RetryUntilElapsed(maxElapsed, sleep);
// neither may be negative.
func NewUntilElapsed(maxElapsed, sleep time.Duration) (*UntilElapsed, error) {
	if maxElapsed < 0 {
		return nil, invalid("max elapsed %v must not be negative", maxElapsed)
	}
	if sleep < 0 {
		return nil, invalid("sleep %v must not be negative", sleep)
	}
	return &UntilElapsed{maxElapsed: maxElapsed, sleep: sleep}, nil
}

// Next implements Policy.
func (p *UntilElapsed) Next(retryCount int, elapsed time.Duration) (time.Duration, bool) {
	if retryCount < 0 || elapsed >= p.maxElapsed {
		return 0, false
	}
	return p.sleep, true
}

// Forever is Curator's RetryForever: every retry is allowed, after the same
// sleep. Only the caller's context ends the operation.
type Forever struct{ sleep time.Duration }

// NewForever returns Curator's RetryForever(sleep); sleep must be positive,
// as Curator checks.
func NewForever(sleep time.Duration) (*Forever, error) {
	if sleep <= 0 {
		return nil, invalid("sleep %v must be positive", sleep)
	}
	return &Forever{sleep: sleep}, nil
}

// Next implements Policy.
func (p *Forever) Next(int, time.Duration) (time.Duration, bool) { return p.sleep, true }

// Never is a Policy that never retries: every error is returned at once.
var Never Policy = never{}

type never struct{}

func (never) Next(int, time.Duration) (time.Duration, bool) { return 0, false }
