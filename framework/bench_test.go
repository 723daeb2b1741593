package framework_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// BenchmarkRoundTrip: one client's sequential requests, by kind, on the
// shared server. A write (create, delete, setData) goes through the
// server's commit pipeline; a read (exists, getChildren) does not. An
// uncontended lock is two writes with us, two writes and a read with
// Curator and go-zookeeper's lock: these figures bound the ratio.
func BenchmarkRoundTrip(b *testing.B) {
	ctx := context.Background()
	c := testenv.Client(b, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("rtt")))
	if _, err := c.Create(ctx, "/n", nil); err != nil {
		b.Fatal(err)
	}
	b.Run("read=exists", func(b *testing.B) {
		for range b.N {
			if _, _, err := c.Exists(ctx, "/n"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read=getChildren", func(b *testing.B) {
		for range b.N {
			if _, _, err := c.Children(ctx, "/n"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write=setData", func(b *testing.B) {
		for range b.N {
			if _, err := c.Set(ctx, "/n", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write=create+delete", func(b *testing.B) {
		for range b.N {
			p, err := c.Create(ctx, "/n/e-", nil, framework.WithMode(framework.ModeEphemeralSequential))
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Delete(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
