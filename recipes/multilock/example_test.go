package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

// Two accounts locked as one for a transfer. Every process that locks
// several accounts takes them in one global order (here, sorted paths), so
// no two can deadlock.
func ExampleMultiLock() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ml, err := multilock.NewFromPaths(client, "/accounts/alice", "/accounts/bob")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ml.Lock(ctx); err != nil { // one deadline for the whole set
		log.Fatal(err)
	}
	fmt.Println("both held:", ml.IsAcquiredInThisProcess())
	// ... move the money; give up if <-ml.Lost() ...
	fmt.Println("unlock:", ml.Unlock(ctx))
	fmt.Println("both held:", ml.IsAcquiredInThisProcess())
	// Output:
	// both held: true
	// unlock: <nil>
	// both held: false
}

// New takes any curator.Locker: here a locks.Mutex and a semaphore.Mutex,
// taken in this order and released in the reverse order.
func ExampleNew() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	orders, err := locks.NewMutex(client, "/locks/orders")
	if err != nil {
		log.Fatal(err)
	}
	billing, err := semaphore.NewMutex(client, "/locks/billing")
	if err != nil {
		log.Fatal(err)
	}
	ml, err := multilock.New(orders, billing)
	if err != nil {
		log.Fatal(err)
	}
	if err := ml.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("orders held:", orders.IsAcquiredInThisProcess(), "billing held:", billing.IsAcquiredInThisProcess())
	fmt.Println("unlock:", ml.Unlock(ctx))
	fmt.Println("orders held:", orders.IsAcquiredInThisProcess(), "billing held:", billing.IsAcquiredInThisProcess())

	// The same lock twice would wait on itself: refused.
	_, err = multilock.New(orders, orders)
	fmt.Println("a member twice, ErrInvalidArgument:", errors.Is(err, curator.ErrInvalidArgument))
	// Output:
	// orders held: true billing held: true
	// unlock: <nil>
	// orders held: false billing held: false
	// a member twice, ErrInvalidArgument: true
}

// TryLock takes every member without waiting, or none: when a member is
// held elsewhere, the error is a *MemberError naming it, and the members
// already taken are given back.
func ExampleMemberError() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c1, err := framework.New(srv.ConnectString()) // process 1
	if err != nil {
		log.Fatal(err)
	}
	defer c1.Close()
	c2, err := framework.New(srv.ConnectString()) // process 2
	if err != nil {
		log.Fatal(err)
	}
	defer c2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Process 2 holds bob's account.
	bob, err := locks.NewMutex(c2, "/accounts/bob")
	if err != nil {
		log.Fatal(err)
	}
	if err := bob.Lock(ctx); err != nil {
		log.Fatal(err)
	}

	// Process 1 tries alice and bob.
	ml, err := multilock.NewFromPaths(c1, "/accounts/alice", "/accounts/bob")
	if err != nil {
		log.Fatal(err)
	}
	err = ml.TryLock(ctx)
	var me *multilock.MemberError
	if errors.As(err, &me) {
		fmt.Printf("member %d (%s) failed, ErrLocked: %v\n", me.Index, me.Path, errors.Is(err, curator.ErrLocked))
	}
	fmt.Println("process 1 holds anything:", ml.IsAcquiredInThisProcess())

	// alice was given back: process 2 can take it at once.
	alice, err := locks.NewMutex(c2, "/accounts/alice")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("process 2 TryLock alice:", alice.TryLock(ctx))
	for _, m := range []*locks.Mutex{alice, bob} {
		if err := m.Unlock(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// member 1 (/accounts/bob) failed, ErrLocked: true
	// process 1 holds anything: false
	// process 2 TryLock alice: <nil>
}

// Two processes take the same two locks in different orders: process 1 x
// then y, process 2 y then x. Process 2 has taken y and is about to wait for
// x; process 1 takes x and waits for y. Each would wait for the other
// forever; process 1 giving up (its context cancelled, or its deadline
// passed) ends it: its Lock gives x back and says it failed at y, and
// process 2 can take x.
func ExampleMultiLock_differentOrders() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c1, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer c1.Close()
	c2, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer c2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Process 2, half-way through its own multi-lock [y, x]: y is held.
	y2, err := locks.NewMutex(c2, "/order/y")
	if err != nil {
		log.Fatal(err)
	}
	x2, err := locks.NewMutex(c2, "/order/x")
	if err != nil {
		log.Fatal(err)
	}
	if err := y2.Lock(ctx); err != nil {
		log.Fatal(err)
	}

	// Process 1 takes [x, y]; WithOnEnqueue tells the example when it
	// waits for y, holding x.
	waitingForY := make(chan string, 1)
	x1, err := locks.NewMutex(c1, "/order/x")
	if err != nil {
		log.Fatal(err)
	}
	y1, err := locks.NewMutex(c1, "/order/y", locks.WithOnEnqueue(func(node string) { waitingForY <- node }))
	if err != nil {
		log.Fatal(err)
	}
	xy, err := multilock.New(x1, y1)
	if err != nil {
		log.Fatal(err)
	}
	attempt, giveUp := context.WithCancel(ctx)
	defer giveUp()
	done := make(chan error, 1)
	go func() { done <- xy.Lock(attempt) }()
	select {
	case <-waitingForY:
		fmt.Println("process 1 holds x:", x1.IsAcquiredInThisProcess(), "and waits for y")
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}

	giveUp() // process 1 gives up: x is given back
	err = <-done
	var me *multilock.MemberError
	if errors.As(err, &me) {
		fmt.Printf("process 1 failed at lock %d (%s), canceled: %v\n",
			me.Index, me.Path, errors.Is(err, context.Canceled))
	}
	fmt.Println("process 1 holds x or y:", x1.IsAcquiredInThisProcess() || y1.IsAcquiredInThisProcess())

	// Nothing stayed held: x is free for process 2 at once.
	fmt.Println("process 2 takes x:", x2.TryLock(ctx))
	for _, m := range []*locks.Mutex{x2, y2} {
		if err := m.Unlock(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// process 1 holds x: true and waits for y
	// process 1 failed at lock 1 (/order/y), canceled: true
	// process 1 holds x or y: false
	// process 2 takes x: <nil>
}

// Lost is closed when any member of the holding is lost: here the
// connection of the client holding them drops (under the default
// curator.LoseOnSuspend).
func ExampleMultiLock_Lost() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	px, err := zktest.NewProxy(srv.Addr()) // the holder's network
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()
	client, err := framework.New(px.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ml, err := multilock.NewFromPaths(client, "/accounts/alice", "/accounts/bob")
	if err != nil {
		log.Fatal(err)
	}
	if err := ml.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	lost := ml.Lost()
	px.Drop()
	select {
	case <-lost:
		fmt.Println("lost: stop the transfer")
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	err = ml.Unlock(ctx)
	fmt.Println("Unlock, ErrLockLost:", errors.Is(err, curator.ErrLockLost))
	// Output:
	// lost: stop the transfer
	// Unlock, ErrLockLost: true
}
