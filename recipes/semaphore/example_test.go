package semaphore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
)

func zkAddress() string { return testenv.Shared().ConnectString() }

func ExampleSemaphore() {
	client, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	sem, err := semaphore.New(client, "/examples/sem", 3)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	leases, err := sem.AcquireN(ctx, 2) // all or none
	if err != nil {
		log.Fatal(err)
	}
	parts, _ := sem.Participants(ctx)
	fmt.Println("leases held:", len(parts))
	if err := sem.ReturnAll(ctx, leases); err != nil {
		log.Fatal(err)
	}
	// Output: leases held: 2
}

func ExampleMutex() {
	client, err := framework.New(zkAddress())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	m, _ := semaphore.NewMutex(client, "/examples/semmutex")
	ctx := context.Background()
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.IsAcquiredInThisProcess())
	fmt.Println(m.Unlock(ctx))
	// Output:
	// true
	// <nil>
}
