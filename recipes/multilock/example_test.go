package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/multilock"
)

func zkAddress() string { return testenv.Shared().ConnectString() }

// Two accounts locked as one for a transfer. Every process that locks
// several accounts takes them in one global order (here, sorted paths), so
// no two can deadlock.
func ExampleMultiLock() {
	client, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ml, err := multilock.NewFromPaths(client, "/examples/accounts/alice", "/examples/accounts/bob")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ml.Lock(ctx); err != nil { // one deadline for the whole set
		log.Fatal(err)
	}
	fmt.Println("both held:", ml.IsAcquiredInThisProcess())
	// ... move the money; give up if <-ml.Lost() ...
	fmt.Println("unlock:", ml.Unlock(ctx))
	// Output:
	// both held: true
	// unlock: <nil>
}

// Two processes take the same two locks in different orders: process 1 x
// then y, process 2 y then x. Process 2 has taken y and is about to wait for
// x; process 1 takes x and waits for y. Each would wait for the other
// forever; process 1's deadline ends it: its Lock gives x back and says it
// failed at y, and process 2 can take x.
func ExampleMultiLock_differentOrders() {
	c1, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer c1.Close()
	c2, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer c2.Close()
	ctx := context.Background()

	// Process 2, half-way through its own multi-lock [y, x]: y is held.
	y2, _ := locks.NewMutex(c2, "/examples/order/y")
	x2, _ := locks.NewMutex(c2, "/examples/order/x")
	if err := y2.Lock(ctx); err != nil {
		log.Fatal(err)
	}

	// Process 1 takes [x, y], with a deadline.
	xy, _ := multilock.NewFromPaths(c1, "/examples/order/x", "/examples/order/y")
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	err = xy.Lock(short) // gets x, waits for y until the deadline, gives x back
	var me *multilock.MemberError
	if errors.As(err, &me) {
		fmt.Printf("process 1 failed at lock %d (%s), deadline exceeded: %v\n",
			me.Index, me.Path, errors.Is(err, context.DeadlineExceeded))
	}
	fmt.Println("process 1 holds x or y:", xy.IsAcquiredInThisProcess())

	// Nothing stayed held: x is free for process 2 at once.
	fmt.Println("process 2 takes x:", x2.TryLock(ctx))
	x2.Unlock(ctx)
	y2.Unlock(ctx)
	// Output:
	// process 1 failed at lock 1 (/examples/order/y), deadline exceeded: true
	// process 1 holds x or y: false
	// process 2 takes x: <nil>
}
