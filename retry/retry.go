// Package retry holds Curator's retry policies for the framework's retry
// loop.
//
// A Policy decides whether a failed ZooKeeper operation is tried again and
// after how long. The framework retries only errors whose outcome is unknown
// rather than refused: connection loss, operation timeout, session moved and
// session expired (Curator's RetryLoop.isRetryException); everything else is
// returned at once. Policies never sleep: the retry loop sleeps, with the
// caller's context, for the duration the policy returns.
//
// | Curator                          | gocurator                           |
// |----------------------------------|-------------------------------------|
// | ExponentialBackoffRetry          | NewExponentialBackoff (+WithMaxSleep)|
// | BoundedExponentialBackoffRetry   | NewBoundedExponentialBackoff        |
// | RetryNTimes                      | NewNTimes                           |
// | RetryOneTime                     | NewOneTime                          |
// | RetryUntilElapsed                | NewUntilElapsed                     |
// | RetryForever                     | NewForever                          |
//
// Curator's exponential formula (a uniformly random count of base units,
// base × max(1, rand(2^(n+1)))) is not cenkalti/backoff's (a multiplier with
// a randomization factor around it), so the Curator policies are written out
// here, to give exactly Curator's sleeps; FromBackOff adapts any
// backoff.BackOff for those who prefer backoff's shape.
package retry

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Policy decides whether a failed ZooKeeper operation is tried again.
type Policy interface {
	// Next is called after the attempt numbered retryCount (0 for the first
	// retry decision) failed with a retryable error, elapsed after the first
	// attempt began. It returns how long to sleep before the next attempt
	// and whether to retry at all. It must be safe for concurrent use.
	Next(retryCount int, elapsed time.Duration) (sleep time.Duration, ok bool)
}

// ErrInvalidArgument is wrapped by every constructor's error.
var ErrInvalidArgument = errors.New("retry: invalid argument")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// MaxRetriesLimit is where Curator pins ExponentialBackoffRetry's retry
// count (MAX_RETRIES_LIMIT): above it, 1<<(count+1) would overflow.
const MaxRetriesLimit = 29

// ExponentialBackoff is Curator's ExponentialBackoffRetry: up to maxRetries
// retries, sleeping base × max(1, rand.IntN(1 << (retryCount+1))), capped at
// the maximum sleep if one is set. maxRetries above 29 is pinned to 29 (as
// Curator does, with a warning).
type ExponentialBackoff struct {
	base, maxSleep time.Duration
	maxRetries     int
	intN           func(int) int
}

// ExponentialOption configures NewExponentialBackoff.
type ExponentialOption func(*ExponentialBackoff)

// WithMaxSleep caps every sleep (Curator's maxSleepMs argument).
func WithMaxSleep(d time.Duration) ExponentialOption {
	return func(e *ExponentialBackoff) { e.maxSleep = d }
}

// NewExponentialBackoff returns Curator's ExponentialBackoffRetry(base,
// maxRetries[, maxSleep]). base must be positive, maxRetries not negative,
// and a max sleep, if given, at least base.
func NewExponentialBackoff(base time.Duration, maxRetries int, opts ...ExponentialOption) (*ExponentialBackoff, error) {
	e := &ExponentialBackoff{base: base, maxRetries: maxRetries, intN: rand.IntN}
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
	case e.maxSleep < 0 || (e.maxSleep > 0 && e.maxSleep < base):
		return nil, invalid("max sleep %v must be at least the base sleep %v", e.maxSleep, base)
	}
	if e.maxRetries > MaxRetriesLimit {
		e.maxRetries = MaxRetriesLimit
	}
	return e, nil
}

// MaxRetries returns the retry count in force (after pinning at 29).
func (e *ExponentialBackoff) MaxRetries() int { return e.maxRetries }

// Next implements Policy.
func (e *ExponentialBackoff) Next(retryCount int, _ time.Duration) (time.Duration, bool) {
	if retryCount < 0 || retryCount >= e.maxRetries {
		return 0, false
	}
	return e.sleep(retryCount), true
}

func (e *ExponentialBackoff) sleep(retryCount int) time.Duration {
	units := e.intN(1 << (retryCount + 1))
	if units < 1 {
		units = 1
	}
	d := e.base * time.Duration(units)
	if e.maxSleep > 0 && d > e.maxSleep {
		d = e.maxSleep
	}
	return d
}

// NewBoundedExponentialBackoff returns Curator's
// BoundedExponentialBackoffRetry(base, maxSleep, maxRetries): the
// exponential formula, every sleep capped at maxSleep (>= base).
func NewBoundedExponentialBackoff(base, maxSleep time.Duration, maxRetries int) (*ExponentialBackoff, error) {
	if maxSleep <= 0 {
		return nil, invalid("max sleep %v must be positive", maxSleep)
	}
	return NewExponentialBackoff(base, maxRetries, WithMaxSleep(maxSleep))
}

// NTimes is Curator's RetryNTimes: up to n retries, each after the same sleep.
type NTimes struct {
	n     int
	sleep time.Duration
}

// NewNTimes returns RetryNTimes(n, sleep); n and sleep must not be negative.
func NewNTimes(n int, sleep time.Duration) (*NTimes, error) {
	if n < 0 {
		return nil, invalid("retry count %d must not be negative", n)
	}
	if sleep < 0 {
		return nil, invalid("sleep %v must not be negative", sleep)
	}
	return &NTimes{n, sleep}, nil
}

// NewOneTime returns Curator's RetryOneTime(sleep): one retry.
func NewOneTime(sleep time.Duration) (*NTimes, error) { return NewNTimes(1, sleep) }

// Next implements Policy.
func (p *NTimes) Next(retryCount int, _ time.Duration) (time.Duration, bool) {
	if retryCount < 0 || retryCount >= p.n {
		return 0, false
	}
	return p.sleep, true
}

// UntilElapsed is Curator's RetryUntilElapsed: retry, sleeping a fixed time,
// as long as less than maxElapsed has passed since the first attempt began
// (checked before sleeping).
type UntilElapsed struct {
	maxElapsed, sleep time.Duration
}

// NewUntilElapsed returns RetryUntilElapsed(maxElapsed, sleep); neither may
// be negative.
func NewUntilElapsed(maxElapsed, sleep time.Duration) (*UntilElapsed, error) {
	if maxElapsed < 0 || sleep < 0 {
		return nil, invalid("max elapsed %v and sleep %v must not be negative", maxElapsed, sleep)
	}
	return &UntilElapsed{maxElapsed, sleep}, nil
}

// Next implements Policy.
func (p *UntilElapsed) Next(_ int, elapsed time.Duration) (time.Duration, bool) {
	if elapsed >= p.maxElapsed {
		return 0, false
	}
	return p.sleep, true
}

// Forever is Curator's RetryForever: always retry after a fixed sleep. The
// caller's context is what ends it.
type Forever struct{ sleep time.Duration }

// NewForever returns RetryForever(sleep); sleep must be positive (as Curator
// checks).
func NewForever(sleep time.Duration) (*Forever, error) {
	if sleep <= 0 {
		return nil, invalid("sleep %v must be positive", sleep)
	}
	return &Forever{sleep}, nil
}

// Next implements Policy.
func (p *Forever) Next(int, time.Duration) (time.Duration, bool) { return p.sleep, true }

// Never is a policy that never retries.
var Never Policy = never{}

type never struct{}

func (never) Next(int, time.Duration) (time.Duration, bool) { return 0, false }

// FromBackOff adapts cenkalti/backoff: the sleep before retry n is the
// (n+1)th NextBackOff of a fresh BackOff from newBackOff, and backoff.Stop
// ends the retries. Replaying a fresh BackOff keeps the adapter stateless,
// so one policy value serves any number of operations at once. A BackOff's
// own clock (MaxElapsedTime) starts anew at each decision and so does not
// bound an operation: combine with NewUntilElapsed's semantics by using
// that policy instead.
func FromBackOff(newBackOff func() backoff.BackOff) (Policy, error) {
	if newBackOff == nil {
		return nil, invalid("nil backoff factory")
	}
	return fromBackOff(newBackOff), nil
}

type fromBackOff func() backoff.BackOff

func (f fromBackOff) Next(retryCount int, _ time.Duration) (time.Duration, bool) {
	if retryCount < 0 {
		return 0, false
	}
	b := f()
	b.Reset()
	var d time.Duration
	for i := 0; i <= retryCount; i++ {
		if d = b.NextBackOff(); d == backoff.Stop {
			return 0, false
		}
	}
	return d, true
}
