package retry

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// FromBackOff returns a Policy that sleeps as a cenkalti/backoff BackOff
// does: before retry n (from 0) it sleeps the (n+1)th NextBackOff of a fresh
// BackOff from newBackOff, and backoff.Stop ends the retries. For example:
//
//	p, err := retry.FromBackOff(func() backoff.BackOff {
//		return backoff.WithMaxRetries(backoff.NewExponentialBackOff(), 5)
//	})
//
// A BackOff is stateful and a Policy is shared by every operation of a
// client at once, so the policy keeps no BackOff: each decision replays a
// fresh one up to retry n. Its cost grows with n: small next to the sleeps
// for a bounded backoff, but a never-stopping one with millisecond
// intervals, over a long outage, spends more on the replay (milliseconds
// by retry 100,000) than on the sleep; bound such a policy
// (backoff.WithMaxRetries, NewUntilElapsed, the context). newBackOff must
// return a new value each call. The BackOff's
// own clock (ExponentialBackOff.MaxElapsedTime) restarts at each decision,
// so it does not bound an operation; bound it with the context instead, or
// use NewUntilElapsed.
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
	if b == nil {
		return 0, false
	}
	b.Reset()
	var d time.Duration
	for range retryCount + 1 {
		if d = b.NextBackOff(); d == backoff.Stop {
			return 0, false
		}
	}
	return max(d, 0), true
}
