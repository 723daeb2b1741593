package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

var shared *zktest.Server

func TestMain(m *testing.M) {
	srv, err := zktest.NewServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "semaphore tests need ZooKeeper:", err)
		os.Exit(1)
	}
	shared = srv
	code := m.Run()
	srv.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	opts = append([]framework.Option{framework.WithSessionTimeout(2 * time.Second), framework.WithConnectionTimeout(5 * time.Second)}, opts...)
	c, err := framework.New(connect, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

var pathSeq atomic.Int64

func semPath(t testing.TB) string {
	return fmt.Sprintf("/semtest/%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), pathSeq.Add(1))
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newSem(t testing.TB, c *framework.Client, path string, max int, opts ...semaphore.Option) *semaphore.Semaphore {
	t.Helper()
	s, err := semaphore.New(c, path, max, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// leaseNodes returns the lease nodes on the server (none if the path is gone).
func leaseNodes(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	kids, _, err := c.Children(testCtx(t, 10*time.Second), path+"/leases")
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	return kids
}
