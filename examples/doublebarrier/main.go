// Command doublebarrier shows barrier.DoubleBarrier (Curator's
// DistributedDoubleBarrier): four members in separate sessions start their
// computation together and finish together.
//
//	go run ./examples/doublebarrier     (ZK_CONNECT=host:port to use your ensemble)
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
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	const members = 4
	// A member's failure cancels the others and is returned after every
	// client is closed.
	g, ctx := errgroup.WithContext(ctx)
	for i := 1; i <= members; i++ {
		client, err := framework.New(srv.ConnectString())
		if err != nil {
			return err
		}
		defer client.Close()
		db, err := barrier.NewDoubleBarrier(client, "/examples/doublebarrier", members)
		if err != nil {
			return err
		}
		g.Go(func() error {
			time.Sleep(time.Duration(i) * 100 * time.Millisecond) // members arrive at different times
			fmt.Printf("member %d enters\n", i)
			if err := db.Enter(ctx); err != nil {
				return err
			}
			fmt.Printf("member %d: all %d are in, computing\n", i, members)
			time.Sleep(time.Duration(members-i) * 100 * time.Millisecond)
			fmt.Printf("member %d leaves\n", i)
			if err := db.Leave(ctx); err != nil {
				return err
			}
			fmt.Printf("member %d: all have left\n", i)
			return nil
		})
	}
	return g.Wait()
}
