// Command counter shows the counters and shared values (recipes/atomic's
// Long, Curator's DistributedAtomicLong, and recipes/shared's Count,
// Curator's SharedCount): four workers, each with its own ZooKeeper
// session, count jobs in one counter by compare-and-set, contending, and
// promoted to a lock when their optimistic tries run out; an admin
// changes the batch size every worker reads from a shared count; and a
// worker whose reply is lost on the network is told its increment's
// outcome is unknown rather than counted twice.
//
//	go run ./examples/counter              # starts a local ZooKeeper
//	ZK_CONNECT=host:2181 go run ./examples/counter
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/testing/zktest"
)

const (
	counterPath = "/demo/jobs-done"
	lockPath    = "/demo/jobs-done-lock"
	batchPath   = "/demo/batch-size"
	workers     = 4
	rounds      = 5
)

func main() { zkenv.Main(run) }

func run(ctx context.Context, srv *zktest.Server) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	fmt.Printf("gocurator counters: %s (8 bytes, big-endian, as Curator's)\n\n", counterPath)

	admin, err := framework.New(srv.ConnectString())
	if err != nil {
		return err
	}
	defer admin.Close()
	batch, err := shared.NewCount(admin, batchPath, 1) // 1 if new
	if err != nil {
		return err
	}
	if err := batch.Start(ctx); err != nil {
		return err
	}
	defer batch.Close()

	// Each worker: its own session, its own Long on the one counter.
	// Few optimistic retries, then the lock (PromotedToLock), under which
	// it may still lose to optimistic writers, and tries again: the lock
	// serialises promoted writers only.
	few, err := retry.NewNTimes(2, time.Millisecond)
	if err != nil {
		return err
	}
	underLock, err := retry.NewBoundedExponentialBackoff(time.Millisecond, 20*time.Millisecond, 20)
	if err != nil {
		return err
	}
	type worker struct {
		counter *atomic.Long
		batch   *shared.Count
	}
	var ws []worker
	for range workers {
		c, err := framework.New(srv.ConnectString())
		if err != nil {
			return err
		}
		defer c.Close()
		l, err := atomic.NewLong(c, counterPath, atomic.WithRetryPolicy(few),
			atomic.WithPromotedToLock(lockPath), atomic.WithPromotedRetryPolicy(underLock),
			atomic.WithPromotedTimeout(30*time.Second))
		if err != nil {
			return err
		}
		b, err := shared.NewCount(c, batchPath, 1)
		if err != nil {
			return err
		}
		if err := b.Start(ctx); err != nil {
			return err
		}
		defer b.Close()
		ws = append(ws, worker{l, b})
	}

	work := func() (int64, atomic.Stats, error) {
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			added int64
			stats atomic.Stats
			errs  []error
		)
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					n := int64(w.batch.Count()) // the batch size as this worker sees it
					r, err := w.counter.Add(ctx, n)
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						added += n
						stats.OptimisticTries += r.Stats.OptimisticTries
						stats.PromotedTries += r.Stats.PromotedTries
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return added, stats, errors.Join(errs...)
	}

	for _, size := range []int{1, 10} {
		if err := batch.SetCount(ctx, size); err != nil {
			return err
		}
		for _, w := range ws { // each worker's Count follows the node by its watch
			for w.batch.Count() != size {
				select {
				case <-w.batch.Changed():
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		added, stats, err := work()
		if err != nil {
			return err
		}
		fmt.Printf("batch size %d: %d workers x %d adds = %d, in %d optimistic and %d promoted tries\n",
			size, workers, rounds, added, stats.OptimisticTries, stats.PromotedTries)
	}
	r, err := ws[0].counter.Get(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("counter: %d (want %d)\n\n", r.PreValue, workers*rounds*(1+10))

	// A worker whose write reaches ZooKeeper but whose reply is lost.
	px, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		return err
	}
	defer px.Close()
	c, err := framework.New(px.Addr() + srv.Chroot())
	if err != nil {
		return err
	}
	defer c.Close()
	unlucky, err := atomic.NewLong(c, counterPath)
	if err != nil {
		return err
	}
	held := px.HoldReply(zktest.OpSetData)
	done := make(chan error, 1)
	go func() { _, err := unlucky.Increment(ctx); done <- err }()
	if err := held.Wait(ctx); err != nil {
		return err
	}
	held.Drop() // the connection closes: the reply never comes
	err = <-done
	fmt.Println("increment whose reply was lost, outcome unknown (ErrConnectionLoss):", errors.Is(err, curator.ErrConnectionLoss))
	after, err := ws[0].counter.Get(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("counter: %d: applied once, not twice (Curator's retry would add again)\n", after.PreValue)
	if after.PreValue != r.PreValue+1 {
		return fmt.Errorf("counter %d after one increment from %d", after.PreValue, r.PreValue)
	}
	return nil
}
