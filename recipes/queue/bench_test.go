package queue_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/testing/zktest"
)

// BenchmarkQueue is the bench's queue workload (bench/queue.go) in small:
// K producer and K consumer clients, b.N items of 100 bytes put as fast as
// they go and taken; items/s end to end, and the requests the server
// received per item (mntr's zk_packets_received, on a server of its own):
// the figure that moves the bench, the server being the bottleneck.
//
//	go test -run - -bench Queue -benchtime 2000x -cpuprofile cpu.out ./recipes/queue
func BenchmarkQueue(b *testing.B) {
	for _, lock := range []bool{true, false} {
		for _, k := range []int{4, 16} {
			name := fmt.Sprintf("K=%d/nolock", k)
			if lock {
				name = fmt.Sprintf("K=%d/lockpath", k)
			}
			b.Run(name, func(b *testing.B) { benchQueue(b, k, lock) })
		}
	}
}

func benchQueue(b *testing.B, k int, lock bool) {
	srv := zktest.StartServer(b)
	ctx := testenv.Ctx(b, testenv.WaitLong)
	path := "/bench/q"
	var opts []queue.Option
	if lock {
		opts = append(opts, queue.WithLockPath("/bench/locks"))
	}
	var taken atomic.Int64
	all := make(chan struct{})
	var closeOnce sync.Once
	for range k {
		q, err := queue.New(newClient(b, srv.ConnectString()), path, queue.Bytes{}, func(context.Context, []byte) error {
			if taken.Add(1) == int64(b.N) {
				closeOnce.Do(func() { close(all) })
			}
			return nil
		}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { q.Close() })
	}
	producers := make([]*queue.Queue[[]byte], k)
	for i := range producers {
		producers[i], _ = queue.New[[]byte](newClient(b, srv.ConnectString()), path, queue.Bytes{}, nil)
	}
	item := make([]byte, 100)
	packets := func() int64 {
		m, err := srv.Mntr()
		if err != nil {
			b.Fatal(err)
		}
		n, _ := strconv.ParseInt(m["zk_packets_received"], 10, 64)
		return n
	}
	p0 := packets()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := p.Put(ctx, item); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	<-all
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
	b.ReportMetric(float64(packets()-p0)/float64(b.N), "requests/item")
}
