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
	"log"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/multilock"
)

func main() {
	srv := zkenv.Start()
	defer srv.Close()
	ctx := context.Background()
	accounts := []string{"/examples/accounts/alice", "/examples/accounts/bob"}

	var g errgroup.Group // the first failure is reported after the clients close
	for i := 1; i <= 2; i++ {
		client, err := framework.New(srv.ConnectString())
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		ml, err := multilock.NewFromPaths(client, accounts...) // one global order
		if err != nil {
			log.Fatal(err)
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
		log.Print(err)
		return
	}

	// Opposite order (bob, then alice) while another process holds alice:
	// it takes bob, waits for alice until the deadline, and rolls bob back.
	c1, _ := framework.New(srv.ConnectString())
	defer c1.Close()
	c2, _ := framework.New(srv.ConnectString())
	defer c2.Close()
	holder, _ := multilock.NewFromPaths(c1, accounts[0])
	reversed, _ := multilock.NewFromPaths(c2, accounts[1], accounts[0])
	holder.Lock(ctx)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err := reversed.Lock(short)
	fmt.Println("reversed order gave up:", err)
	fmt.Println("and holds nothing:", !reversed.IsAcquiredInThisProcess())
	holder.Unlock(ctx)
}
