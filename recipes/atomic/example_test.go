package atomic_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/testing/zktest"
)

// A Long is a counter every process adds to by compare-and-set: three
// processes add 1 ten times each, at once, and the counter ends at 30.
func ExampleLong() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	for range 3 { // three processes, a session each
		client, err := framework.New(srv.ConnectString())
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		counter, err := atomic.NewLong(client, "/counters/visits")
		if err != nil {
			log.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				r, err := counter.Increment(ctx)
				if err != nil { // ErrContention: the retry policy gave up
					log.Fatal(err)
				}
				if r.PostValue != r.PreValue+1 {
					log.Fatalf("%d -> %d", r.PreValue, r.PostValue)
				}
			}
		}()
	}
	wg.Wait()

	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	counter, err := atomic.NewLong(client, "/counters/visits")
	if err != nil {
		log.Fatal(err)
	}
	r, err := counter.Get(ctx)
	fmt.Println("visits:", r.PreValue, err)
	data, _, _ := client.Get(ctx, "/counters/visits")
	fmt.Printf("node: % x\n", data)
	// Output:
	// visits: 30 <nil>
	// node: 00 00 00 00 00 00 00 1e
}

// CompareAndSet writes only over the expected value, once; Initialize
// makes the node only if it is missing (a missing node is not 0 to
// CompareAndSet, as in Curator).
func ExampleLong_CompareAndSet() {
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

	epoch, err := atomic.NewLong(client, "/config/epoch")
	if err != nil {
		log.Fatal(err)
	}
	r, err := epoch.CompareAndSet(ctx, 0, 1)
	fmt.Println("CompareAndSet(0, 1) on a missing node:", r.Succeeded, err)
	ok, err := epoch.Initialize(ctx, 0)
	fmt.Println("Initialize(0):", ok, err)
	r, err = epoch.CompareAndSet(ctx, 0, 1)
	fmt.Println("CompareAndSet(0, 1):", r.Succeeded, r.PreValue, "->", r.PostValue, err)
	r, err = epoch.CompareAndSet(ctx, 0, 2)
	fmt.Println("CompareAndSet(0, 2) on 1:", r.Succeeded, "pre", r.PreValue, err)
	// Output:
	// CompareAndSet(0, 1) on a missing node: false <nil>
	// Initialize(0): true <nil>
	// CompareAndSet(0, 1): true 0 -> 1 <nil>
	// CompareAndSet(0, 2) on 1: false pre 1 <nil>
}

// With WithPromotedToLock, an operation whose optimistic tries all lost
// takes a lock (Curator's InterProcessMutex layout) and tries again under
// it. Here the first optimistic try is the only one allowed.
func ExampleWithPromotedToLock() {
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

	once, err := retry.NewNTimes(0, 0)
	if err != nil {
		log.Fatal(err)
	}
	underLock, err := retry.NewNTimes(5, 10*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	counter, err := atomic.NewInt(client, "/counters/builds",
		atomic.WithRetryPolicy(once),
		atomic.WithPromotedToLock("/locks/builds-counter"),
		atomic.WithPromotedRetryPolicy(underLock),
		atomic.WithPromotedTimeout(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	r, err := counter.Add(ctx, 5)
	fmt.Println("Add(5):", r.Succeeded, r.PreValue, "->", r.PostValue, err)
	fmt.Println("tries:", r.Stats.OptimisticTries, "optimistic,", r.Stats.PromotedTries, "promoted")
	// Output:
	// Add(5): true 0 -> 5 <nil>
	// tries: 1 optimistic, 0 promoted
}

// A Value holds any bytes; TrySet replaces them by compare-and-set,
// whatever they are. An operation not applied returns an error saying
// why: errors.Is it against the module's sentinels.
func ExampleValue() {
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

	leader, err := atomic.NewValue(client, "/config/leader-address")
	if err != nil {
		log.Fatal(err)
	}
	r, err := leader.TrySet(ctx, []byte("10.0.0.7:9000"))
	fmt.Printf("TrySet: %v, was %q, now %q, %v\n", r.Succeeded, r.PreValue, r.PostValue, err)
	r, err = leader.CompareAndSet(ctx, []byte("10.0.0.7:9000"), []byte("10.0.0.8:9000"))
	fmt.Printf("CompareAndSet: %v, now %q, %v\n", r.Succeeded, r.PostValue, err)

	// A counter over fewer than its 8 bytes is corrupt: nothing written.
	if err := leader.ForceSet(ctx, []byte("none")); err != nil {
		log.Fatal(err)
	}
	bad, err := atomic.NewLong(client, "/config/leader-address")
	if err != nil {
		log.Fatal(err)
	}
	_, err = bad.Increment(ctx)
	fmt.Println("Increment of \"none\", ErrCorrupt:", errors.Is(err, curator.ErrCorrupt))
	// Output:
	// TrySet: true, was "", now "10.0.0.7:9000", <nil>
	// CompareAndSet: true, now "10.0.0.8:9000", <nil>
	// Increment of "none", ErrCorrupt: true
}

// A CachedLong hands out unique ids from a shared counter, reserving 100
// at a time: one compare-and-set per 100 ids, each id once across
// processes.
func ExampleCachedLong() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	counter, err := atomic.NewLong(client, "/ids/orders")
	if err != nil {
		log.Fatal(err)
	}
	ids, err := atomic.NewCachedLong(counter, 100)
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		r, err := ids.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("order id:", r.PreValue)
	}
	r, err := counter.Get(ctx)
	fmt.Println("reserved:", r.PreValue, err)
	// Output:
	// order id: 0
	// order id: 1
	// order id: 2
	// reserved: 100 <nil>
}
