package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/testing/zktest"
)

// At most two workers at once, across every process on the path: a third
// waits until a lease comes back.
func ExampleSemaphore() {
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	sem, err := semaphore.New(client, "/semaphores/workers", 2)
	if err != nil {
		log.Fatal(err)
	}
	first, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	second, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("two leases held")

	// A third worker (here a goroutine; usually another process) waits.
	queued := make(chan string, 1)
	third, err := semaphore.New(client, "/semaphores/workers", 2,
		semaphore.WithOnEnqueue(func(node string) { queued <- node }))
	if err != nil {
		log.Fatal(err)
	}
	got := make(chan *semaphore.Lease, 1)
	go func() {
		lease, err := third.Acquire(ctx)
		if err != nil {
			log.Fatal(err)
		}
		got <- lease
	}()
	select {
	case <-queued:
		fmt.Println("third worker waiting")
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}

	fmt.Println("first returns its lease:", first.Release(ctx))
	var lease *semaphore.Lease
	select {
	case lease = <-got:
		fmt.Println("third worker got a lease")
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	for _, l := range []*semaphore.Lease{second, lease} {
		if err := l.Release(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Returning a lease twice is a misuse.
	err = second.Release(ctx)
	fmt.Println("second Release, ErrNotHeld:", errors.Is(err, curator.ErrNotHeld))
	// Output:
	// two leases held
	// third worker waiting
	// first returns its lease: <nil>
	// third worker got a lease
	// second Release, ErrNotHeld: true
}

// AcquireN takes n leases at once, all or none: a caller never waits
// holding part of what it needs.
func ExampleSemaphore_AcquireN() {
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

	sem, err := semaphore.New(client, "/semaphores/gpu", 3)
	if err != nil {
		log.Fatal(err)
	}
	two, err := sem.AcquireN(ctx, 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leases:", len(two))

	// Two more cannot be had while two of three are out: the call waits
	// until its deadline and takes none.
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = sem.AcquireN(short, 2)
	cancelShort()
	fmt.Println("two more, DeadlineExceeded:", errors.Is(err, context.DeadlineExceeded))
	nodes, err := sem.Participants(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("lease nodes:", len(nodes))

	// More than the maximum could never be granted.
	_, err = sem.AcquireN(ctx, 4)
	fmt.Println("four, ErrInvalidArgument:", errors.Is(err, curator.ErrInvalidArgument))

	fmt.Println("ReturnAll:", sem.ReturnAll(ctx, two))
	// Output:
	// leases: 2
	// two more, DeadlineExceeded: true
	// lease nodes: 2
	// four, ErrInvalidArgument: true
	// ReturnAll: <nil>
}

// TryAcquire takes a lease only if one is free now.
func ExampleSemaphore_TryAcquire() {
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

	sem, err := semaphore.New(client, "/semaphores/exporter", 1)
	if err != nil {
		log.Fatal(err)
	}
	lease, err := sem.TryAcquire(ctx)
	fmt.Println("first:", err)
	_, err = sem.TryAcquire(ctx)
	fmt.Println("second, ErrLocked:", errors.Is(err, curator.ErrLocked))
	if err := lease.Release(ctx); err != nil {
		log.Fatal(err)
	}
	lease, err = sem.TryAcquire(ctx)
	fmt.Println("after the release:", err)
	if err := lease.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// first: <nil>
	// second, ErrLocked: true
	// after the release: <nil>
}

// A lease lives in an ephemeral node: when its session expires, the holder
// is told (Lost, Context) and the server gives the lease to others. The
// example cuts the holder's network with a fault proxy until the server
// expires its session.
func ExampleLease_Lost() {
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
	holderClient, err := framework.New(px.Addr(), framework.WithSessionTimeout(2*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer holderClient.Close()
	otherClient, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer otherClient.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	sem, err := semaphore.New(holderClient, "/semaphores/licence", 1)
	if err != nil {
		log.Fatal(err)
	}
	lease, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	work := lease.Context() // the holder works under the lease's context

	if err := zktest.ExpireSession(ctx, px, srv, holderClient.Session().ID()); err != nil {
		log.Fatal(err)
	}
	select {
	case <-lease.Lost():
		fmt.Println("lease lost")
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	<-work.Done()
	fmt.Println("work context, cause ErrLockLost:", errors.Is(context.Cause(work), curator.ErrLockLost))

	// The server has removed the lease node with the session.
	otherSem, err := semaphore.New(otherClient, "/semaphores/licence", 1)
	if err != nil {
		log.Fatal(err)
	}
	otherLease, err := otherSem.Acquire(ctx)
	fmt.Println("another process acquires:", err)

	// Releasing the lost lease says it was lost.
	fmt.Println("Release, ErrLockLost:", errors.Is(lease.Release(ctx), curator.ErrLockLost))
	if err := otherLease.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// lease lost
	// work context, cause ErrLockLost: true
	// another process acquires: <nil>
	// Release, ErrLockLost: true
}

// The lease's context carries the acquiring context's values and ends when
// the lease does: by a loss (cause ErrLockLost; here a dropped connection,
// under the default curator.LoseOnSuspend) or by its release.
func ExampleLease_Context() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	px, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()
	flaky, err := framework.New(px.Addr()) // a client whose connection drops
	if err != nil {
		log.Fatal(err)
	}
	defer flaky.Close()
	steady, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer steady.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	semA, err := semaphore.New(flaky, "/semaphores/jobs", 2)
	if err != nil {
		log.Fatal(err)
	}
	semB, err := semaphore.New(steady, "/semaphores/jobs", 2)
	if err != nil {
		log.Fatal(err)
	}
	a, err := semA.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	b, err := semB.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}

	px.Drop()
	select {
	case <-a.Context().Done():
		fmt.Println("a: lost, ErrLockLost:", errors.Is(context.Cause(a.Context()), curator.ErrLockLost))
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	fmt.Println("b: running:", b.Context().Err() == nil)
	if err := b.Release(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("b: released, ErrLockLost:", errors.Is(context.Cause(b.Context()), curator.ErrLockLost),
		"context done:", b.Context().Err() != nil)
	fmt.Println("a: Release, ErrLockLost:", errors.Is(a.Release(ctx), curator.ErrLockLost))
	// Output:
	// a: lost, ErrLockLost: true
	// b: running: true
	// b: released, ErrLockLost: false context done: true
	// a: Release, ErrLockLost: true
}

// A lease guards writes like a lock: GuardedMulti writes only while the
// lease node exists, and FencingToken gives a number a resource can check.
func ExampleLease_GuardedMulti() {
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

	if _, err := client.Create(ctx, "/shards/7/owner", nil, framework.WithParents()); err != nil {
		log.Fatal(err)
	}
	sem, err := semaphore.New(client, "/semaphores/shard-7", 1)
	if err != nil {
		log.Fatal(err)
	}
	lease, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	token, err := lease.FencingToken(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fencing token > 0:", token > 0)

	_, err = lease.GuardedMulti(ctx, framework.SetDataOp{Path: "/shards/7/owner", Data: []byte("worker-a"), Version: -1})
	fmt.Println("write while held:", err)

	// An operator deletes the lease node.
	if err := client.Delete(ctx, lease.Node()); err != nil {
		log.Fatal(err)
	}
	_, err = lease.GuardedMulti(ctx, framework.SetDataOp{Path: "/shards/7/owner", Data: []byte("stale"), Version: -1})
	fmt.Println("write once the lease node is gone, ErrLockLost:", errors.Is(err, curator.ErrLockLost))
	owner, _, err := client.Get(ctx, "/shards/7/owner")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("owner = %s\n", owner)
	fmt.Println("Release, ErrLockLost:", errors.Is(lease.Release(ctx), curator.ErrLockLost))
	// Output:
	// fencing token > 0: true
	// write while held: <nil>
	// write once the lease node is gone, ErrLockLost: true
	// owner = worker-a
	// Release, ErrLockLost: true
}

// A semaphore whose maximum is a shared.Count: raising the count lets a
// waiting acquirer in at once.
func ExampleNewWithSharedCount() {
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

	count, err := shared.NewCount(client, "/config/max-exports", 1)
	if err != nil {
		log.Fatal(err)
	}
	if err := count.Start(ctx); err != nil { // before acquiring: until then the maximum is 0
		log.Fatal(err)
	}
	defer count.Close()

	sem, err := semaphore.NewWithSharedCount(client, "/semaphores/exports", count)
	if err != nil {
		log.Fatal(err)
	}
	first, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}

	queued := make(chan string, 1)
	waiter, err := semaphore.NewWithSharedCount(client, "/semaphores/exports", count,
		semaphore.WithOnEnqueue(func(node string) { queued <- node }))
	if err != nil {
		log.Fatal(err)
	}
	got := make(chan *semaphore.Lease, 1)
	go func() {
		lease, err := waiter.Acquire(ctx)
		if err != nil {
			log.Fatal(err)
		}
		got <- lease
	}()
	select {
	case <-queued:
		fmt.Println("second acquirer waiting, maximum", count.Count())
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}

	if err := count.SetCount(ctx, 2); err != nil {
		log.Fatal(err)
	}
	select {
	case second := <-got:
		fmt.Printf("maximum %d: second acquirer got a lease\n", count.Count())
		fmt.Println("returned:", first.Release(ctx), second.Release(ctx))
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	// Output:
	// second acquirer waiting, maximum 1
	// maximum 2: second acquirer got a lease
	// returned: <nil> <nil>
}

// The semaphore mutex (Curator's InterProcessSemaphoreMutex) is a mutex on
// a one-lease semaphore. Unlike locks.Mutex, it is not reentrant.
func ExampleMutex() {
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

	m, err := semaphore.NewMutex(client, "/locks/billing")
	if err != nil {
		log.Fatal(err)
	}
	other, err := semaphore.NewMutex(client, "/locks/billing")
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("held:", m.IsAcquiredInThisProcess())
	fmt.Println("other TryLock, ErrLocked:", errors.Is(other.TryLock(ctx), curator.ErrLocked))
	fmt.Println("Unlock:", m.Unlock(ctx))
	fmt.Println("Unlock again, ErrNotHeld:", errors.Is(m.Unlock(ctx), curator.ErrNotHeld))
	fmt.Println("other TryLock:", other.TryLock(ctx))
	if err := other.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// held: true
	// other TryLock, ErrLocked: true
	// Unlock: <nil>
	// Unlock again, ErrNotHeld: true
	// other TryLock: <nil>
}
