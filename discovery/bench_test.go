package discovery_test

import (
	"fmt"
	"testing"

	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/internal/testenv"
)

// BenchmarkProvider: a Provider's pick and a Cache's Instances over 20
// instances, served from the cache (the peer bench's discoveryquery runs
// the same beside Curator's ServiceProvider and ServiceCache).
func BenchmarkProvider(b *testing.B) {
	ctx := testenv.Ctx(b, testenv.WaitLong)
	c := testenv.Client(b, testenv.Shared().ConnectString())
	d, err := discovery.New[payload](c, testenv.Path(b, "/disc-bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for i := range 20 {
		if _, err := d.Register(ctx, discovery.Instance[payload]{Name: "api", ID: fmt.Sprint("i", i), Address: "10.0.0.1", Port: 8000 + i}); err != nil {
			b.Fatal(err)
		}
	}
	p, err := d.NewProvider("api")
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("Instance", func(b *testing.B) {
		for range b.N {
			if _, ok := p.Instance(); !ok {
				b.Fatal("no instance")
			}
		}
	})
	b.Run("Instances", func(b *testing.B) {
		for range b.N {
			if n := len(p.Cache().Instances()); n != 20 {
				b.Fatalf("%d instances", n)
			}
		}
	})
}
