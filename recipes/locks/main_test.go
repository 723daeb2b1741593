package locks_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// shared is the server for tests that inject no fault; each test uses
// paths of its own.
var shared *zktest.Server

func TestMain(m *testing.M) {
	srv, err := zktest.NewServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "locks tests need ZooKeeper:", err)
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

const sessionTimeout = 2 * time.Second

// newClient connects a client (its own session) and closes it at cleanup.
func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	opts = append([]framework.Option{framework.WithSessionTimeout(sessionTimeout), framework.WithConnectionTimeout(5 * time.Second)}, opts...)
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

// lockPath returns a path no other test uses.
func lockPath(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("/locktest/%s-%d/lock", name, pathSeq.Add(1))
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds or the (generous) deadline passes.
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

func newMutex(t testing.TB, c *framework.Client, path string, opts ...locks.Option) *locks.Mutex {
	t.Helper()
	m, err := locks.NewMutex(c, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	kids, _, err := c.Children(testCtx(t, 10*time.Second), path)
	if err != nil && !strings.Contains(err.Error(), "node does not exist") {
		t.Fatal(err)
	}
	return kids
}
