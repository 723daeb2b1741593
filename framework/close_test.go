package framework_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// noRetry never retries: a background job then waits between its attempts
// in the background queue's own backoff.
type noRetry struct{}

func (noRetry) Next(int, time.Duration) (time.Duration, bool) { return 0, false }

// Close stops every goroutine the client started, with work in every
// corner: a listener, a waiting watch, a protected create whose attempt is
// still in flight, a guaranteed delete retrying in the background. A
// pending delete's Wait returns ErrClosed instead of blocking forever.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	p := zktest.StartProxy(t, testenv.Shared().Addr())
	ignore := goleak.IgnoreCurrent()

	c, err := framework.New(p.Addr(),
		framework.WithNamespace(testenv.Uniq("close")),
		framework.WithSessionTimeout(40*time.Second), // Close must not wait it: see the bound below
		framework.WithConnectionTimeout(500*time.Millisecond),
		framework.WithRetryPolicy(noRetry{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() }) // should the test end before it closes c (Close is idempotent)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	c.AddListener(func(framework.State) {})
	if _, err := c.Create(ctx, "/node", nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/doomed", "/doomed2"} {
		if _, err := c.Create(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	_, _, w, err := c.GetW(ctx, "/node")
	if err != nil {
		t.Fatal(err)
	}

	p.SetDelay(3 * time.Second)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = c.Create(short, "/node/p", nil, framework.WithProtection())
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("delayed protected create: %v", err)
	}
	p.Refuse(true)
	p.Drop()
	// Two deletes: background jobs run one at a time, so at Close one of
	// them at least is not running (queued, or waiting to retry).
	var pending []*framework.DeletePendingError
	for _, p := range []string{"/doomed", "/doomed2"} {
		short, cancel = context.WithTimeout(ctx, 1500*time.Millisecond)
		err = c.Delete(short, p, framework.WithGuarantee())
		cancel()
		var pe *framework.DeletePendingError
		if !errors.As(err, &pe) {
			t.Fatalf("guaranteed delete without a connection: %v", err)
		}
		pending = append(pending, pe)
	}
	if c.PendingBackground() == 0 {
		t.Fatal("nothing pending in the background")
	}

	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returns within a few seconds at worst, never the session
	// timeout (40 s): a bound of 30 s tells the two apart, and only a stall
	// trips it.
	d := time.Since(start)
	t.Logf("Close took %v", d)
	if d > 30*time.Second {
		t.Errorf("Close took %v (session timeout 40 s)", d)
	}
	for _, pe := range pending {
		if err := pe.Wait(ctx); !errors.Is(err, curator.ErrClosed) {
			t.Fatalf("Wait for a delete abandoned by Close: %v, want ErrClosed", err)
		}
	}
	// WaitBackground does not wait for work Close abandoned.
	if err := c.WaitBackground(ctx); err != nil && !errors.Is(err, curator.ErrClosed) {
		t.Fatalf("WaitBackground after Close: %v, want nil or ErrClosed", err)
	}
	if ev := waitEvent(t, w, testenv.WaitShort); ev.Type != framework.EventNotWatching || !errors.Is(ev.Err, curator.ErrClosed) {
		t.Fatalf("watch event on Close: %+v", ev)
	}
	p.Close()
	goleak.VerifyNone(t, ignore)
}
