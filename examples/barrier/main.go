// Command barrier shows barrier.Barrier (Curator's DistributedBarrier):
// three workers wait on a barrier until a coordinator removes it.
//
//	go run ./examples/barrier     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/testing/zktest"
)

func main() { zkenv.Main(run) }

func run(ctx context.Context, srv *zktest.Server) error {
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b, err := barrier.NewBarrier(client, "/examples/barrier")
	if err != nil {
		return err
	}
	if err := b.Set(ctx); err != nil {
		return err
	}
	var g errgroup.Group // the first worker's failure, once all have returned
	for i := 1; i <= 3; i++ {
		g.Go(func() error {
			fmt.Printf("worker %d waits\n", i)
			if err := b.Wait(ctx); err != nil {
				return fmt.Errorf("worker %d: %w", i, err)
			}
			fmt.Printf("worker %d goes\n", i)
			return nil
		})
	}
	time.Sleep(500 * time.Millisecond) // the coordinator's own work
	fmt.Println("coordinator removes the barrier")
	if err := b.Remove(ctx); err != nil {
		return err
	}
	return g.Wait()
}
