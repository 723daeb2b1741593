package semaphore_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

// A VersionedValue is a count with the version it was read at: TrySetCount
// writes over that version only, so a read-modify-write loop never loses
// an update. Here two processes each add 1 five times, at once.
func ExampleVersionedValue() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	increment := func(sc *semaphore.SharedCount) {
		for {
			changed := sc.Changed() // before the read: no change goes unseen
			v := sc.VersionedValue()
			ok, err := sc.TrySetCount(ctx, v, v.Value+1)
			if err != nil {
				log.Fatal(err)
			}
			if ok {
				return
			}
			select { // someone wrote first: wait until the watch has read it
			case <-changed:
			case <-ctx.Done():
				log.Fatal(ctx.Err())
			}
		}
	}

	var wg sync.WaitGroup
	for range 2 { // two processes
		client, err := framework.New(srv.ConnectString())
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		sc, err := semaphore.NewSharedCount(client, "/counters/jobs", 0)
		if err != nil {
			log.Fatal(err)
		}
		if err := sc.Start(ctx); err != nil {
			log.Fatal(err)
		}
		defer sc.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				increment(sc)
			}
		}()
	}
	wg.Wait()

	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	total, err := semaphore.NewSharedCount(client, "/counters/jobs", 0)
	if err != nil {
		log.Fatal(err)
	}
	if err := total.Start(ctx); err != nil { // reads the node as it is now
		log.Fatal(err)
	}
	defer total.Close()
	v := total.VersionedValue()
	fmt.Println("count:", v.Value, "version:", v.Version)
	// Output:
	// count: 10 version: 10
}

// WithData labels the lease nodes, so that whoever lists the semaphore's
// holders (an operator, Lease.Data) can tell who they are.
func ExampleWithData() {
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

	sem, err := semaphore.New(client, "/semaphores/exports", 3, semaphore.WithData([]byte("worker-7")))
	if err != nil {
		log.Fatal(err)
	}
	lease, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	data, err := lease.Data(ctx)
	fmt.Printf("lease data: %s %v\n", data, err)
	fmt.Println("under the semaphore's leases:", framework.ParentPath(lease.Node()))
	fmt.Println("Release:", lease.Release(ctx))
	// Output:
	// lease data: worker-7 <nil>
	// under the semaphore's leases: /semaphores/exports/leases
	// Release: <nil>
}
