// Command barrier shows barrier.Barrier (Curator's DistributedBarrier):
// three workers wait on a barrier until a coordinator removes it.
//
//	go run ./examples/barrier     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/barrier"
)

func main() {
	srv := zkenv.Start()
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := barrier.NewBarrier(client, "/examples/barrier")
	if err != nil {
		log.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Printf("worker %d waits\n", i)
			if err := b.Wait(ctx); err != nil {
				log.Fatal(err)
			}
			fmt.Printf("worker %d goes\n", i)
		}()
	}
	time.Sleep(500 * time.Millisecond) // the coordinator's own work
	fmt.Println("coordinator removes the barrier")
	if err := b.Remove(ctx); err != nil {
		log.Fatal(err)
	}
	wg.Wait()
}
