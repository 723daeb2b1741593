package atomic_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// Issue 42: K counter objects, each on a session of its own, increment one
// counter on a 3-member ensemble whose leader is killed mid-run. The
// guarantee (package documentation, "Exactly once"): an increment that
// returned Succeeded was applied exactly once; one whose error wraps
// curator.ErrConnectionLoss ("the write may have been applied, once") was
// applied once or not at all; any other error wrote nothing. So the
// counter ends between the successes and the successes plus the unknown
// ones. A lost reply must not count twice: the write is sent once
// (framework.WithSendOnce) and resolved by a read, never re-sent blindly
// as Curator's retry loop would.
func TestIncrementsThroughLeaderKill(t *testing.T) {
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	cl := zktest.StartCluster(t, 3)
	leader, err := cl.Leader()
	if err != nil {
		t.Fatal(err)
	}
	const k = 3
	path := "/leaderkill/counter"
	var succeeded, unknown, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range k {
		c := testenv.Client(t, cl.ConnectString(), framework.WithSessionTimeout(10*time.Second), framework.WithRetryPolicy(testenv.Patient{}))
		l := newLong(t, c, path, patient(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := l.Increment(ctx)
				switch {
				case err == nil && r.Succeeded:
					succeeded.Add(1)
				case errors.Is(err, curator.ErrConnectionLoss) && !errors.Is(err, curator.ErrClosed):
					unknown.Add(1)
				case err != nil:
					failed.Add(1)
				default:
					t.Errorf("Increment: %+v with no error", r)
				}
			}
		}()
	}
	progress := func(n int64) {
		t.Helper()
		testenv.WaitFor(t, testenv.WaitLong, "increments going on", func() bool { return succeeded.Load() >= n })
	}
	progress(50)
	if err := cl.Members()[leader].Stop(); err != nil {
		t.Fatal(err)
	}
	if err := cl.WaitQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	progress(succeeded.Load() + 50) // every counter object goes on through the new leader
	close(stop)
	wg.Wait()
	reader := testenv.Client(t, cl.ConnectString())
	r, err := newLong(t, reader, path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, u := succeeded.Load(), unknown.Load()
	t.Logf("counter %d: %d succeeded, %d unknown, %d failed (member %d, the leader, killed)", r.PreValue, s, u, failed.Load(), leader+1)
	if r.PreValue < s || r.PreValue > s+u {
		t.Fatalf("counter %d, want between %d (succeeded) and %d (plus unknown): an increment lost or doubled", r.PreValue, s, s+u)
	}
}
