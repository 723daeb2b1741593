package barrier_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// quiet is the server of the tests that count the server's watches: they
// do not run in parallel, and each starts once its total is 0. The others
// share testenv.Shared(), on paths of their own, most in parallel.
var quiet *zktest.Server

func TestMain(m *testing.M) { testenv.Main(m, &quiet) }

// newClient connects a client (a session of its own) that rides out faults
// rather than giving up, closed at cleanup.
func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.Client(t, connect, append([]framework.Option{framework.WithRetryPolicy(testenv.Patient{})}, opts...)...)
}

// barrierPath returns a path no other test (or run) uses.
func barrierPath(t testing.TB) string { return testenv.Path(t, "/barriertest") + "/barrier" }

// waitWaiters waits until c has n watch waiters. A waiter is counted from
// just before the read that sets its watch, so the recipe may still be in
// that read; waitWatched waits for the server's side.
func waitWaiters(t testing.TB, c *framework.Client, n int) {
	t.Helper()
	testenv.Eventually(t, testenv.WaitShort, fmt.Sprintf("%d watch waiters", n), func() error {
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
	testenv.Eventually(t, testenv.WaitShort, fmt.Sprintf("a watch on %s", path), func() error {
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
	testenv.Eventually(t, testenv.WaitShort, fmt.Sprintf("server watch count %d", n), func() error {
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
