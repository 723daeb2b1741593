package multilock_test

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
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// shared is the server for tests that inject no fault; each test uses
// paths of its own.
var shared *zktest.Server

// withServer runs the tests with the shared server up, and stops it before
// goleak looks for goroutines left behind.
type withServer struct{ m *testing.M }

func (w withServer) Run() int {
	srv, err := zktest.NewServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "multilock tests need ZooKeeper:", err)
		return 1
	}
	shared = srv
	defer srv.Close()
	return w.m.Run()
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(withServer{m}) }

// newClient connects a client (its own session) and closes it at clean-up.
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

var seq atomic.Int64

// paths returns n lock paths no other test uses.
func paths(t testing.TB, n int) []string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	base := fmt.Sprintf("/mltest/%s-%d", name, seq.Add(1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/lock-%d", base, i)
	}
	return out
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// children returns the children of path on the server (none if it is gone).
func children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kids, _, err := c.Children(ctx, path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	return kids
}

// noNodes fails unless no path has a child on the server.
func noNodes(t testing.TB, c *framework.Client, ps ...string) {
	t.Helper()
	for _, p := range ps {
		if kids := children(t, c, p); len(kids) != 0 {
			t.Errorf("%s still has %v", p, kids)
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out after %v waiting for %s", d, what)
		case <-tick.C:
		}
	}
}

func mutex(t testing.TB, c *framework.Client, p string) *locks.Mutex {
	t.Helper()
	m, err := locks.NewMutex(c, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
