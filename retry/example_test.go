package retry_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/retry"
)

func ExampleNewExponentialBackoff() {
	// Curator's ExponentialBackoffRetry(100, 3, 500).
	p, err := retry.NewExponentialBackoff(100*time.Millisecond, 3, retry.WithMaxSleep(500*time.Millisecond))
	if err != nil {
		panic(err)
	}
	for n := 0; n <= 3; n++ {
		sleep, ok := p.Next(n, 0)
		// Retry n sleeps 100ms × max(1, rand.IntN(2^(n+1))), at most 500ms.
		hi := min(100*time.Millisecond*(1<<(n+1)-1), 500*time.Millisecond)
		fmt.Printf("retry %d: %v, sleep in [100ms, %v]: %v\n", n, ok, hi, ok && sleep >= 100*time.Millisecond && sleep <= hi)
	}
	_, err = retry.NewExponentialBackoff(0, 3)
	fmt.Println(err)
	// Output:
	// retry 0: true, sleep in [100ms, 100ms]: true
	// retry 1: true, sleep in [100ms, 300ms]: true
	// retry 2: true, sleep in [100ms, 500ms]: true
	// retry 3: false, sleep in [100ms, 500ms]: false
	// retry: invalid argument: base sleep 0s must be positive
}

func ExampleFromBackOff() {
	p, err := retry.FromBackOff(func() backoff.BackOff {
		return backoff.WithMaxRetries(backoff.NewConstantBackOff(50*time.Millisecond), 2)
	})
	if err != nil {
		panic(err)
	}
	for n := 0; n <= 2; n++ {
		fmt.Println(p.Next(n, 0))
	}
	// Output:
	// 50ms true
	// 50ms true
	// 0s false
}

func ExampleNewBoundedExponentialBackoff() {
	// Curator's BoundedExponentialBackoffRetry(100, 400, 4).
	p, err := retry.NewBoundedExponentialBackoff(100*time.Millisecond, 400*time.Millisecond, 4)
	if err != nil {
		panic(err)
	}
	for n := 0; n <= 4; n++ {
		sleep, ok := p.Next(n, 0)
		fmt.Printf("retry %d: %v, sleep in [100ms, 400ms]: %v\n", n, ok, ok && sleep >= 100*time.Millisecond && sleep <= 400*time.Millisecond)
	}
	// A maximum below the base is refused.
	_, err = retry.NewBoundedExponentialBackoff(time.Second, time.Millisecond, 3)
	fmt.Println(errors.Is(err, curator.ErrInvalidArgument))
	// Output:
	// retry 0: true, sleep in [100ms, 400ms]: true
	// retry 1: true, sleep in [100ms, 400ms]: true
	// retry 2: true, sleep in [100ms, 400ms]: true
	// retry 3: true, sleep in [100ms, 400ms]: true
	// retry 4: false, sleep in [100ms, 400ms]: false
	// true
}

func ExampleNewNTimes() {
	// Curator's RetryNTimes(2, 250).
	p, err := retry.NewNTimes(2, 250*time.Millisecond)
	if err != nil {
		panic(err)
	}
	for n := 0; n <= 2; n++ {
		fmt.Println(p.Next(n, 0))
	}
	// Output:
	// 250ms true
	// 250ms true
	// 0s false
}

func ExampleNewOneTime() {
	// Curator's RetryOneTime(500).
	p, err := retry.NewOneTime(500 * time.Millisecond)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Next(0, 0))
	fmt.Println(p.Next(1, 0))
	// Output:
	// 500ms true
	// 0s false
}

func ExampleNewUntilElapsed() {
	// Curator's RetryUntilElapsed(2000, 300): retries every 300ms while
	// less than 2s have passed since the operation's first attempt.
	p, err := retry.NewUntilElapsed(2*time.Second, 300*time.Millisecond)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Next(0, 100*time.Millisecond))
	fmt.Println(p.Next(5, 1900*time.Millisecond))
	fmt.Println(p.Next(6, 2100*time.Millisecond))
	// Output:
	// 300ms true
	// 300ms true
	// 0s false
}

func ExampleNewForever() {
	// Curator's RetryForever(1000): only the caller's context ends the
	// operation.
	p, err := retry.NewForever(time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Next(1000, time.Hour))
	_, err = retry.NewForever(0)
	fmt.Println(errors.Is(err, curator.ErrInvalidArgument))
	// Output:
	// 1s true
	// true
}

func ExampleNever() {
	// A client whose operations fail at once on a connection loss:
	// framework.New(connect, framework.WithRetryPolicy(retry.Never)).
	fmt.Println(retry.Never.Next(0, 0))
	// Output: 0s false
}

// linear is a Policy of one's own (Curator's RetryPolicy.allowRetry): it
// keeps no per-operation state, since one value serves every operation of
// a client at once, and it never sleeps itself.
type linear struct {
	step time.Duration
	max  int
}

func (l linear) Next(retryCount int, elapsed time.Duration) (time.Duration, bool) {
	if retryCount >= l.max {
		return 0, false
	}
	return time.Duration(retryCount+1) * l.step, true
}

// Any type with Next is a Policy: give it to a client with
// framework.WithRetryPolicy(linear{step: 100 * time.Millisecond, max: 3}).
func ExamplePolicy() {
	var p retry.Policy = linear{step: 100 * time.Millisecond, max: 3}
	for n := 0; n <= 3; n++ {
		fmt.Println(p.Next(n, 0))
	}
	// Output:
	// 100ms true
	// 200ms true
	// 300ms true
	// 0s false
}
