// Command queue shows queue.Queue (Curator's DistributedQueue) as a work
// queue with at-least-once delivery: a web front end puts jobs (resize an
// image) with a session of its own, two workers, each with its own
// session, take them under a lock path (an item is deleted only once its
// worker returned nil), and one job fails once and is requeued at the
// back. Curator's Java DistributedQueue on the same paths would share the
// work: the node names and bytes are Curator's.
//
//	go run ./examples/queue     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/testing/zktest"
)

func main() { zkenv.Main(run) }

const (
	jobs  = "/examples/jobs"
	locks = "/examples/jobs-locks"
)

func run(ctx context.Context, srv *zktest.Server) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	front, err := framework.New(srv.ConnectString())
	if err != nil {
		return err
	}
	defer front.Close()
	producer, err := queue.New[string](front, jobs, queue.String{}, nil)
	if err != nil {
		return err
	}
	images := []string{"cat.png", "dog.png", "owl.png", "fox.png", "elk.png"}
	for _, img := range images {
		if err := producer.Put(ctx, img); err != nil {
			return err
		}
	}
	fmt.Printf("front end: %d jobs queued\n", len(images))

	var (
		mu     sync.Mutex
		done   = map[string]bool{}
		all    = make(chan struct{})
		failed bool
	)
	for w := range 2 {
		c, err := framework.New(srv.ConnectString())
		if err != nil {
			return err
		}
		defer c.Close()
		worker, err := queue.New(c, jobs, queue.String{}, func(ctx context.Context, img string) error {
			mu.Lock()
			defer mu.Unlock()
			if img == "owl.png" && !failed { // a transient failure: requeued, tried again
				failed = true
				return errors.New("thumbnailer busy")
			}
			done[img] = true
			if len(done) == len(images) {
				close(all)
			}
			return nil
		}, queue.WithLockPath(locks), queue.WithOnError(func(err error) {
			fmt.Printf("worker %d: %v (requeued)\n", w, errors.Unwrap(err))
		}))
		if err != nil {
			return err
		}
		defer worker.Close()
		if err := worker.Start(ctx); err != nil {
			return err
		}
	}
	select {
	case <-all:
	case <-ctx.Done():
		return ctx.Err()
	}
	fmt.Printf("workers: all %d jobs done\n", len(images))
	for {
		n, err := producer.Len(ctx)
		if err != nil || n == 0 {
			return err
		}
		time.Sleep(10 * time.Millisecond) // the last delete may still be on its way
	}
}
