package retry_test

import (
	"fmt"
	"time"

	"github.com/gocurator/curator/retry"
)

func ExampleNewExponentialBackoff() {
	p, err := retry.NewExponentialBackoff(100*time.Millisecond, 3)
	if err != nil {
		panic(err)
	}
	for n := 0; n < 4; n++ {
		sleep, ok := p.Next(n, 0)
		fmt.Println(n, ok, sleep >= 100*time.Millisecond)
	}
	_, err = retry.NewExponentialBackoff(0, 3)
	fmt.Println(err)
	// Output:
	// 0 true true
	// 1 true true
	// 2 true true
	// 3 false false
	// retry: invalid argument: base sleep 0s must be positive
}
