package locks_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

// Issue 13 item 10: a Lock waiting when its client is closed fails with an
// error wrapping curator.ErrClosed, not ErrSessionLost: Close says Close.
func TestLockInterruptedByCloseSaysClosed(t *testing.T) {
	path := lockPath(t)
	holder, err := locks.NewMutex(testenv.Client(t, testenv.Shared().ConnectString()), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Ctx(t, 30*time.Second)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(ctx)

	c := testenv.Client(t, testenv.Shared().ConnectString())
	waiter, err := locks.NewMutex(c, path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- waiter.Lock(ctx) }()
	testenv.WaitFor(t, 30*time.Second, "the waiter waiting on its watch", func() bool {
		_, waiters := c.WatchStats()
		return waiters > 0
	})
	c.Close()
	select {
	case err := <-got:
		if !errors.Is(err, curator.ErrClosed) || errors.Is(err, curator.ErrSessionLost) {
			t.Fatalf("Lock interrupted by Close: %v, want an error wrapping ErrClosed only", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Lock still waiting after Close")
	}
}
