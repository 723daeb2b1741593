package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

var (
	// shared is the server of the tests that inject no fault and count no
	// watches; each test uses paths of its own, and most run in parallel.
	shared *zktest.Server
	// quiet is the server of the tests that count the server's watches:
	// they do not run in parallel, and each starts once its total is 0.
	quiet *zktest.Server
)

// withServers runs the tests between starting the servers and stopping
// them, so that goleak looks for goroutines after both.
type withServers struct{ m *testing.M }

func (w withServers) Run() int {
	var err error
	if shared, err = zktest.NewServer(); err != nil {
		fmt.Fprintln(os.Stderr, "barrier tests need ZooKeeper:", err)
		return 1
	}
	defer shared.Close()
	if quiet, err = zktest.NewServer(); err != nil {
		fmt.Fprintln(os.Stderr, "barrier tests need ZooKeeper:", err)
		return 1
	}
	defer quiet.Close()
	return w.m.Run()
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withServers{m})
}

// Timeouts: generous, as CI is a loaded 2-core machine running -race.
const (
	waitLong       = 60 * time.Second // anything that involves a session expiry or many members
	waitShort      = 20 * time.Second // anything else
	sessionTimeout = 2 * time.Second
)

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// patient retries every 50 ms for 30 s: tests ride out faults rather than
// give up.
type patient struct{}

func (patient) Next(_ int, elapsed time.Duration) (time.Duration, bool) {
	return 50 * time.Millisecond, elapsed < 30*time.Second
}

// newClient connects a client (a session of its own) and closes it at
// cleanup.
func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	all := append([]framework.Option{
		framework.WithSessionTimeout(sessionTimeout),
		framework.WithConnectionTimeout(5 * time.Second),
		framework.WithRetryPolicy(patient{}),
	}, opts...)
	c, err := framework.New(connect, all...)
	if err != nil {
		t.Fatalf("New(%q): %v", connect, err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.BlockUntilConnected(testCtx(t, waitShort)); err != nil {
		t.Fatalf("BlockUntilConnected: %v", err)
	}
	return c
}

var pathSeq atomic.Int64

// barrierPath returns a path no other test (or run) uses.
func barrierPath(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("/barriertest/%s-%d-%d/barrier", name, time.Now().UnixNano(), pathSeq.Add(1))
}

// eventually polls cond every 25 ms until it returns nil or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so within %v: %v", what, d, err)
		}
		time.Sleep(25 * time.Millisecond) // polling interval, not synchronization
	}
}

// children lists path's children (none if path does not exist).
func children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	kids, _, err := c.Children(testCtx(t, waitShort), path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("children of %s: %v", path, err)
	}
	return kids
}

// waitWaiters waits until c has n watch waiters. A waiter is counted from
// just before the read that sets its watch, so the recipe may still be in
// that read; waitWatched waits for the server's side.
func waitWaiters(t testing.TB, c *framework.Client, n int) {
	t.Helper()
	eventually(t, waitShort, fmt.Sprintf("%d watch waiters", n), func() error {
		if _, w := c.WatchStats(); w != n {
			return fmt.Errorf("%d waiters", w)
		}
		return nil
	})
}

// waitWatched waits until srv holds a watch on path for session sid: the
// read that set it is done on the server (its reply is on its way).
func waitWatched(t testing.TB, srv *zktest.Server, sid int64, path string) {
	t.Helper()
	eventually(t, waitShort, fmt.Sprintf("a watch on %s", path), func() error {
		m, err := srv.WatchesBySession()
		if err != nil {
			return err
		}
		if !slices.Contains(m[sid], path) {
			return fmt.Errorf("session watches %v", m[sid])
		}
		return nil
	})
}

// waitServerWatches waits until the quiet server holds n watches in all.
func waitServerWatches(t testing.TB, n int) {
	t.Helper()
	eventually(t, waitShort, fmt.Sprintf("server watch count %d", n), func() error {
		got, err := quiet.WatchCount()
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("server holds %d watches", got)
		}
		return nil
	})
}

// sessionWatches returns the paths the quiet server watches for session sid.
func sessionWatches(t testing.TB, sid int64) []string {
	t.Helper()
	m, err := quiet.WatchesBySession()
	if err != nil {
		t.Fatalf("wchc: %v", err)
	}
	return m[sid]
}

// group runs n members on goroutines and collects their errors.
func group(n int, f func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errs
}

func checkErrs(t testing.TB, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("member %d: %v", i, err)
		}
	}
}
