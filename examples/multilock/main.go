// Command multilock shows multilock.MultiLock (Curator's
// InterProcessMultiLock): two transfers lock the two accounts they touch,
// always in the same order, so they cannot deadlock; a third, taking them in
// the opposite order with a deadline, gives up and holds nothing.
//
//	go run ./examples/multilock     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/testing/zktest"
)

func main() { zkenv.Main(run) }

func run(ctx context.Context, srv *zktest.Server) error {
	accounts := []string{"/examples/accounts/alice", "/examples/accounts/bob"}
	var clients []*framework.Client
	for range 2 { // two sessions, as two processes
		c, err := framework.New(srv.ConnectString())
		if err != nil {
			return err
		}
		defer c.Close()
		clients = append(clients, c)
	}

	var g errgroup.Group // the first failure, once both transfers have returned
	for i := 1; i <= 2; i++ {
		ml, err := multilock.NewFromPaths(clients[i-1], accounts...) // one global order
		if err != nil {
			return err
		}
		g.Go(func() error {
			if err := ml.Lock(ctx); err != nil {
				return err
			}
			fmt.Printf("transfer %d holds both accounts\n", i)
			time.Sleep(200 * time.Millisecond)
			return ml.Unlock(ctx)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}

	// Opposite order (bob, then alice) while another process holds alice:
	// it takes bob, waits for alice until the deadline, and rolls bob back.
	holder, err := multilock.NewFromPaths(clients[0], accounts[0])
	if err != nil {
		return err
	}
	reversed, err := multilock.NewFromPaths(clients[1], accounts[1], accounts[0])
	if err != nil {
		return err
	}
	if err := holder.Lock(ctx); err != nil {
		return err
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err = reversed.Lock(short)
	fmt.Println("reversed order gave up:", err)
	fmt.Println("and holds nothing:", !reversed.IsAcquiredInThisProcess())
	return holder.Unlock(ctx)
}
