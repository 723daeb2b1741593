package barrier_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/barrier"
)

// zkAddress is the ZooKeeper the examples talk to (in tests, a real server
// the test binary started; in your program, your ensemble).
func zkAddress() string { return testenv.Shared().ConnectString() }

func ExampleBarrier() {
	client, err := framework.New(zkAddress(), framework.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	b, err := barrier.NewBarrier(client, "/examples/barrier")
	if err != nil {
		log.Fatal(err)
	}
	if err := b.Set(ctx); err != nil { // the coordinator raises the barrier
		log.Fatal(err)
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a worker, usually in another process
		defer wg.Done()
		if err := b.Wait(ctx); err != nil {
			log.Fatal(err)
		}
		fmt.Println("worker: barrier down, starting")
	}()

	// ... the coordinator prepares the work, then lets the workers go:
	if err := b.Remove(ctx); err != nil {
		log.Fatal(err)
	}
	wg.Wait()
	// Output: worker: barrier down, starting
}

func ExampleDoubleBarrier() {
	client, err := framework.New(zkAddress(), framework.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Three members (usually three processes) compute together.
	const members = 3
	var wg sync.WaitGroup
	results := make([]string, members)
	for i := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := barrier.NewDoubleBarrier(client, "/examples/double", members)
			if err != nil {
				log.Fatal(err)
			}
			if err := d.Enter(ctx); err != nil { // blocks until all 3 are in
				log.Fatal(err)
			}
			results[i] = fmt.Sprintf("member %d computed", i)
			if err := d.Leave(ctx); err != nil { // blocks until all 3 are out
				log.Fatal(err)
			}
		}()
	}
	wg.Wait()
	for _, r := range results {
		fmt.Println(r)
	}
	// Output:
	// member 0 computed
	// member 1 computed
	// member 2 computed
}
