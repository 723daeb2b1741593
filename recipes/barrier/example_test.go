package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/testing/zktest"
)

// A coordinator holds workers back until the work is ready.
func ExampleBarrier() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	coordinator, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer coordinator.Close()
	worker, err := framework.New(srv.ConnectString()) // usually another process
	if err != nil {
		log.Fatal(err)
	}
	defer worker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	b, err := barrier.NewBarrier(coordinator, "/barriers/deploy")
	if err != nil {
		log.Fatal(err)
	}
	if err := b.Set(ctx); err != nil { // the coordinator raises the barrier
		log.Fatal(err)
	}

	wb, err := barrier.NewBarrier(worker, "/barriers/deploy")
	if err != nil {
		log.Fatal(err)
	}
	// While the barrier is up, Wait blocks (here until a short deadline).
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	err = wb.Wait(short)
	cancelShort()
	fmt.Println("worker: barrier up, DeadlineExceeded:", errors.Is(err, context.DeadlineExceeded))

	done := make(chan error, 1)
	go func() { done <- wb.Wait(ctx) }() // the worker waits again

	// ... the coordinator prepares the work, then lets the workers go:
	if err := b.Remove(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("worker: barrier down:", <-done)
	// Output:
	// worker: barrier up, DeadlineExceeded: true
	// worker: barrier down: <nil>
}

// Members (usually processes, each with its own client) start a
// computation together and finish it together: Enter returns once all
// three are in, Leave once all three are out.
func ExampleDoubleBarrier() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const members = 3
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		entered int // members in the barrier
		counts  = make([]int, members)
		errs    = make([]error, members)
	)
	for i := range members {
		client, err := framework.New(srv.ConnectString())
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		d, err := barrier.NewDoubleBarrier(client, "/barriers/job-42", members)
		if err != nil {
			log.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			entered++
			mu.Unlock()
			if err := d.Enter(ctx); err != nil { // blocks until all 3 are in
				errs[i] = err
				return
			}
			mu.Lock()
			counts[i] = entered // every member sees the others in
			mu.Unlock()
			// ... compute ...
			errs[i] = d.Leave(ctx) // blocks until all 3 are out
		}()
	}
	wg.Wait()
	for i := range members {
		fmt.Printf("member %d: saw %d members in, err %v\n", i, counts[i], errs[i])
	}
	// Output:
	// member 0: saw 3 members in, err <nil>
	// member 1: saw 3 members in, err <nil>
	// member 2: saw 3 members in, err <nil>
}

// Each DoubleBarrier is one member at a time: Leave without Enter is a
// misuse, and so is a second Enter.
func ExampleDoubleBarrier_Enter() {
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

	d, err := barrier.NewDoubleBarrier(client, "/barriers/solo", 1) // a barrier of one
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("Leave before Enter, ErrNotHeld:", errors.Is(d.Leave(ctx), curator.ErrNotHeld))
	fmt.Println("Enter:", d.Enter(ctx))
	fmt.Println("in the barrier:", d.Node() != "")
	fmt.Println("Enter again, ErrBusy:", errors.Is(d.Enter(ctx), curator.ErrBusy))
	fmt.Println("Leave:", d.Leave(ctx))
	fmt.Println("in the barrier:", d.Node() != "")
	// Output:
	// Leave before Enter, ErrNotHeld: true
	// Enter: <nil>
	// in the barrier: true
	// Enter again, ErrBusy: true
	// Leave: <nil>
	// in the barrier: false
}
