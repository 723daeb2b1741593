package cache_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/cache"
)

// BenchmarkCacheLoad: the first load of a tree of 10 x 10 x leaves nodes
// below the root, a fresh cache per iteration, timed to the Initialized
// event at a listener (every node's event delivered before it), as the peer
// bench's cacheload (which runs the 10,000-node tree beside Curator).
func BenchmarkCacheLoad(b *testing.B) {
	for _, leaves := range []int{10, 100} {
		for _, m := range []struct {
			name string
			opts []cache.Option
		}{{"recursive", nil}, {"oneshot", []cache.Option{cache.WithOneShotWatches()}}} {
			b.Run(fmt.Sprintf("nodes=%d/%s", 1+10+100+100*leaves, m.name), func(b *testing.B) { benchLoad(b, leaves, m.opts...) })
		}
	}
}

func benchLoad(b *testing.B, leaves int, opts ...cache.Option) {
	c := testenv.Client(b, testenv.Shared().ConnectString())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root := testenv.Path(b, "/bench-load")
	if _, err := c.Create(ctx, framework.ParentPath(root), nil, framework.WithParents()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		b.Fatal(err)
	}
	var ops []framework.Op
	flush := func() {
		if len(ops) > 0 {
			if _, err := c.Multi(ctx, ops...); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	nodes := 0
	add := func(p string) {
		nodes++
		ops = append(ops, framework.CreateOp{Path: p, Data: []byte("0123456789")})
		if len(ops) == 500 {
			flush()
		}
	}
	add(root)
	for i := range 10 {
		add(fmt.Sprintf("%s/a%d", root, i))
		for j := range 10 {
			add(fmt.Sprintf("%s/a%d/b%d", root, i, j))
			for k := range leaves {
				add(fmt.Sprintf("%s/a%d/b%d/c%d", root, i, j, k))
			}
		}
	}
	flush()
	b.ResetTimer()
	for range b.N {
		cc, err := cache.New(c, root, opts...)
		if err != nil {
			b.Fatal(err)
		}
		created, inited := 0, make(chan struct{})
		cc.AddListener(func(e cache.Event) {
			switch e.Type {
			case cache.EventCreated:
				created++
			case cache.EventInitialized:
				close(inited)
			}
		})
		if err := cc.Start(ctx); err != nil {
			b.Fatal(err)
		}
		<-inited
		if created != nodes {
			b.Fatalf("%d created events, want %d", created, nodes)
		}
		cc.Close()
	}
	b.ReportMetric(float64(nodes*b.N)/b.Elapsed().Seconds(), "nodes/s")
}
