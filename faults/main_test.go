package faults_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	if os.Getenv(latchChildEnv) != "" {
		os.Exit(latchChildMain())
	}
	goleak.VerifyTestMain(m)
}

const sessionTimeout = 2 * time.Second

// netClient is a client whose every connection goes through proxies of its
// own (one per ensemble member), so its network can be cut alone.
type netClient struct {
	*framework.Client
	proxies []*zktest.Proxy
}

func (n *netClient) partition() {
	for _, p := range n.proxies {
		p.Blackhole()
	}
}

func (n *netClient) heal() {
	for _, p := range n.proxies {
		p.Heal()
	}
}

func dial(t testing.TB, cl *zktest.Cluster, opts ...framework.Option) *netClient {
	t.Helper()
	var addrs []string
	n := &netClient{}
	for _, m := range cl.Members() {
		p := zktest.StartProxy(t, m.Addr())
		n.proxies = append(n.proxies, p)
		addrs = append(addrs, p.Addr())
	}
	n.Client = connect(t, strings.Join(addrs, ","), opts...)
	return n
}

func connect(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	opts = append([]framework.Option{framework.WithSessionTimeout(sessionTimeout), framework.WithConnectionTimeout(3 * time.Second)}, opts...)
	c, err := framework.New(connect, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serverWatches sums the watch counts of the running members.
func serverWatches(cl *zktest.Cluster) (int, error) {
	total := 0
	for _, m := range cl.Members() {
		n, err := m.WatchCount()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// report collects the figures of a run for the log and the closing note.
type report struct {
	mu    sync.Mutex
	lines []string
}

func (r *report) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *report) log(t testing.TB) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lines {
		t.Log(l)
	}
}
