// Command mutex shows locks.Mutex (Curator's InterProcessMutex): three
// clients, each its own session, take turns on one lock; each holder reads
// its fencing token and writes only while it holds the lock.
//
//	go run ./examples/mutex     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

func main() { zkenv.Main(run) }

// The lock's path, and the node the lock protects: a node of its own. The
// lock's path belongs to the lock: its children are the contenders, and it
// is a container, which ZooKeeper deletes (data and all) once the queue
// stays empty.
const lockPath, dataPath = "/examples/mutex", "/examples/mutex-data"

func run(ctx context.Context, srv *zktest.Server) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	// A worker's failure cancels the others and is returned after every
	// client is closed.
	g, ctx := errgroup.WithContext(ctx)
	for i := 1; i <= 3; i++ {
		client, err := framework.New(srv.ConnectString(), framework.WithSessionTimeout(5*time.Second))
		if err != nil {
			return err
		}
		defer client.Close()
		if i == 1 {
			if _, err := client.Create(ctx, dataPath, nil, framework.WithParents()); err != nil {
				return err
			}
		}
		m, err := locks.NewMutex(client, lockPath)
		if err != nil {
			return err
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
					_, err = m.GuardedMulti(ctx, framework.SetDataOp{Path: dataPath, Data: []byte(fmt.Sprint(i)), Version: -1})
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
		return err
	}
	fmt.Println("done")
	return nil
}
