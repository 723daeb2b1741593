package retry_test

import (
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

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
