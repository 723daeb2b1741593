package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/multilock"
)

func zkAddress() string { return shared.ConnectString() }

func ExampleMultiLock() {
	client, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	// Always take overlapping sets in one global order: no deadlock.
	ml, err := multilock.NewFromPaths(client, "/examples/accounts/a", "/examples/accounts/b")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := ml.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("both held:", ml.IsAcquiredInThisProcess())
	fmt.Println(ml.Unlock(ctx))
	// Output:
	// both held: true
	// <nil>
}

// Two processes taking the same locks in opposite orders can each hold one
// and wait for the other: the deadline ends it, and the partial acquisition
// is rolled back, so nothing stays held.
func ExampleMultiLock_oppositeOrders() {
	c1, _ := framework.New(zkAddress())
	defer c1.Close()
	c2, _ := framework.New(zkAddress())
	defer c2.Close()
	ab, _ := multilock.NewFromPaths(c1, "/examples/x", "/examples/y")
	yx, _ := multilock.NewFromPaths(c2, "/examples/y")

	ctx := context.Background()
	yx.Lock(ctx) // the other process holds y...
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err := ab.Lock(short) // ...so we get x, wait for y, give up, and release x
	fmt.Println(errors.Is(err, context.DeadlineExceeded), ab.IsAcquiredInThisProcess())
	yx.Unlock(ctx)
	// Output: true false
}
