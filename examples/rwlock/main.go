// Command rwlock shows locks.ReadWriteLock (Curator's
// InterProcessReadWriteLock): readers share, a writer is alone, and the
// write holder downgrades to a read lock without letting a queued writer in.
//
//	go run ./examples/rwlock     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
	"golang.org/x/sync/errgroup"
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
	const path = "/examples/rwlock"

	// Three readers at once: one ReadWriteLock value per goroutine.
	var readers, peak atomic.Int32
	var g errgroup.Group
	for i := 0; i < 3; i++ {
		rw, err := locks.NewReadWriteLock(client, path)
		if err != nil {
			return err
		}
		g.Go(func() error {
			return rw.Read().Do(ctx, func(context.Context) error {
				n := readers.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(200 * time.Millisecond) // stands for the reading
				readers.Add(-1)
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	fmt.Println("readers that held the read lock at the same time:", peak.Load())

	// Write, then downgrade to read with the context the write lock handed out.
	rw, err := locks.NewReadWriteLock(client, path)
	if err != nil {
		return err
	}
	err = rw.Write().Do(ctx, func(wctx context.Context) error {
		fmt.Println("writing")
		return rw.Read().Lock(wctx) // downgrade: granted at once
	})
	if err != nil {
		return err
	}
	fmt.Println("write released, still reading:", rw.Read().IsAcquiredInThisProcess())

	if err := rw.Read().Unlock(ctx); err != nil {
		return err
	}

	// A reader cannot upgrade: an error, not a deadlock.
	rctx, err := rw.Read().Acquire(ctx)
	if err != nil {
		return err
	}
	if err := rw.Write().Lock(rctx); errors.Is(err, curator.ErrUpgrade) {
		fmt.Println("upgrade refused:", err)
	}
	return rw.Read().Unlock(ctx)
}
