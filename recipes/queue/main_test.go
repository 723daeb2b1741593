package queue_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	testenv.Main(m)
}

// newClient connects a client (a session of its own) that rides out faults
// rather than giving up, closed at cleanup.
func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.Client(t, connect, append([]framework.Option{framework.WithRetryPolicy(testenv.Patient{})}, opts...)...)
}

func queuePath(t testing.TB) string { return testenv.Path(t, "/queuetest") + "/q" }

// collector is a consumer that sends what it takes on a channel, failing
// (returning fail's error) when fail says so.
type collector[T any] struct {
	ch   chan T
	mu   sync.Mutex
	fail func(T) error
}

func newCollector[T any]() *collector[T] { return &collector[T]{ch: make(chan T, 1000)} }

func (c *collector[T]) consume(ctx context.Context, v T) error {
	c.mu.Lock()
	fail := c.fail
	c.mu.Unlock()
	if fail != nil {
		if err := fail(v); err != nil {
			return err
		}
	}
	c.ch <- v
	return nil
}

// next receives n items, failing the test if they do not come in time.
func (c *collector[T]) next(t testing.TB, n int) []T {
	t.Helper()
	out := make([]T, 0, n)
	for range n {
		out = append(out, testenv.Recv(t, c.ch, testenv.WaitShort, "an item"))
	}
	return out
}
