package semaphore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

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
