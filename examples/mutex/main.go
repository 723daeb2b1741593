// Command mutex shows locks.Mutex (Curator's InterProcessMutex): three
// clients, each its own session, take turns on one lock; each holder reads
// its fencing token and writes only while it holds the lock.
//
//	go run ./examples/mutex     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
)

func main() {
	srv := zkenv.Start()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A worker's failure cancels the others and is reported after every
	// client and the local ZooKeeper are closed (log.Fatal in a goroutine
	// would skip those defers).
	g, ctx := errgroup.WithContext(ctx)
	for i := 1; i <= 3; i++ {
		client, err := framework.New(srv.ConnectString(), framework.WithSessionTimeout(5*time.Second))
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		m, err := locks.NewMutex(client, "/examples/mutex")
		if err != nil {
			log.Fatal(err)
		}
		g.Go(func() error {
			for round := 0; round < 2; round++ {
				err := m.Do(ctx, func(ctx context.Context) error {
					token, err := m.FencingToken(ctx)
					if err != nil {
						return err
					}
					fmt.Printf("client %d holds the lock, fencing token %d\n", i, token)
					// A ZooKeeper write that succeeds only while we hold the lock:
					_, err = m.GuardedMulti(ctx, framework.SetDataOp{Path: "/examples/mutex", Data: []byte(fmt.Sprint(i)), Version: -1})
					return err
				})
				if err != nil {
					return fmt.Errorf("client %d: %w", i, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		log.Print(err)
		return
	}
	fmt.Println("done")
}
