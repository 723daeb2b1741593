package atomic_test

import (
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/retry"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func atomicPath(t testing.TB) string { return testenv.Path(t, "/atomictest") }

func newLong(t testing.TB, c *framework.Client, path string, opts ...atomic.Option) *atomic.Long {
	t.Helper()
	l, err := atomic.NewLong(c, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// patient is an optimistic policy that outlasts any contention of a test.
func patient(t testing.TB) atomic.Option { return atomic.WithRetryPolicy(patientPolicy(t)) }

func noRetry(t testing.TB) retry.Policy {
	p, err := retry.NewNTimes(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func patientPolicy(t testing.TB) retry.Policy {
	p, err := retry.NewBoundedExponentialBackoff(time.Millisecond, 20*time.Millisecond, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
