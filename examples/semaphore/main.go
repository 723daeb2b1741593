// Command semaphore shows semaphore.Semaphore (Curator's
// InterProcessSemaphoreV2): six workers in separate sessions share three
// leases; never more than three work at once.
//
//	go run ./examples/semaphore     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

func main() { zkenv.Main(run) }

func run(ctx context.Context, srv *zktest.Server) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var working, peak atomic.Int32
	// A worker's failure cancels the others and is returned after every
	// client is closed.
	g, ctx := errgroup.WithContext(ctx)
	for i := 1; i <= 6; i++ {
		client, err := framework.New(srv.ConnectString())
		if err != nil {
			return err
		}
		defer client.Close()
		sem, err := semaphore.New(client, "/examples/semaphore", 3)
		if err != nil {
			return err
		}
		g.Go(func() error {
			lease, err := sem.Acquire(ctx)
			if err != nil {
				return fmt.Errorf("worker %d: %w", i, err)
			}
			n := working.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			fmt.Printf("worker %d got lease %s (%d working)\n", i, lease.Node()[len("/examples/semaphore/leases/"):], n)
			time.Sleep(300 * time.Millisecond)
			working.Add(-1)
			// An error here means the lease was lost while held.
			if err := lease.Release(ctx); err != nil {
				return fmt.Errorf("worker %d: %w", i, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	fmt.Println("most workers at once:", peak.Load())
	return nil
}
