package framework_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

// closeDuring makes the next attempt of op on c wait until c is being
// closed, and returns a channel closed when that attempt has started.
func closeDuring(t *testing.T, c *framework.Client, op string) <-chan struct{} {
	started := make(chan struct{})
	first := true
	restore := framework.SetBeforeAttempt(func(cl *framework.Client, o string) {
		if cl != c || o != op || !first {
			return
		}
		first = false // only this client's goroutine gets here
		close(started)
		<-c.Done()
	})
	t.Cleanup(restore)
	return started
}

// A Mutex.Lock interrupted by Close (while it reads its predecessor, to
// watch it: its create listed the queue) returns an error wrapping
// ErrClosed, as documented, not context.Canceled.
func TestMutexLockInterruptedByClose(t *testing.T) {
	ns := testenv.Uniq("mxclose")
	a := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	b := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	ma, err := locks.NewMutex(a, "/lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := ma.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mb, err := locks.NewMutex(b, "/lock")
	if err != nil {
		t.Fatal(err)
	}
	started := closeDuring(t, b, "get")
	errc := make(chan error, 1)
	go func() { errc <- mb.Lock(ctx) }()
	testenv.Recv(t, started, testenv.WaitShort, "the waiter's read of its predecessor")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, curator.ErrClosed) || errors.Is(err, context.Canceled) {
		t.Fatalf("Lock interrupted by Close: %v, want an error wrapping ErrClosed", err)
	}
	if err := ma.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Background deletes pending at Close, or submitted after it, end with
// ErrClosed at once; nothing stays pending.
func TestBackgroundDeleteAndClose(t *testing.T) {
	p := startProxyFor(t)
	c := newClient(t, p.Addr(), framework.WithNamespace(testenv.Uniq("bgclose")),
		framework.WithSessionTimeout(10*time.Second),
		framework.WithConnectionTimeout(200*time.Millisecond))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/doomed", nil); err != nil {
		t.Fatal(err)
	}
	p.Refuse(true)
	p.Drop()
	pending := c.DeleteInBackground("/doomed")
	if c.PendingBackground() != 1 {
		t.Fatalf("PendingBackground = %d, want 1", c.PendingBackground())
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- c.WaitBackground(ctx) }()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	after := c.DeleteInBackground("/other")
	for name, d := range map[string]*framework.BackgroundDelete{"pending at Close": pending, "submitted after Close": after} {
		short, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := d.Wait(short)
		cancel()
		if !errors.Is(err, curator.ErrClosed) {
			t.Errorf("background delete %s: %v, want ErrClosed", name, err)
		}
		select {
		case <-d.Done():
		default:
			t.Errorf("background delete %s: not done after Close", name)
		}
	}
	if n := c.PendingBackground(); n != 0 {
		t.Errorf("PendingBackground after Close = %d, want 0", n)
	}
	if err := <-waitErr; !errors.Is(err, curator.ErrClosed) {
		t.Errorf("WaitBackground interrupted by Close: %v, want ErrClosed", err)
	}
	if err := c.WaitBackground(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("WaitBackground after Close abandoned work: %v, want ErrClosed", err)
	}
}

// Issue 38 item 5: every call after Close ends with an error wrapping
// ErrClosed, whatever the client did before and whatever the caller's
// context: WaitBackground with nothing pending (its work all done before
// Close) included, and a context already done never wins over ErrClosed.
func TestEveryCallAfterCloseEndsWithErrClosed(t *testing.T) {
	ns := testenv.Uniq("afterclose")
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/gone", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteInBackground("/gone").Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitBackground(ctx); err != nil {
		t.Fatalf("WaitBackground with its work done, before Close: %v", err)
	}
	// A client that never made its namespace: its first create would.
	fresh := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("afterclose-fresh")))
	for _, cl := range []*framework.Client{c, fresh} {
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	want := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, curator.ErrClosed) {
			t.Errorf("%s after Close: %v, want an error wrapping ErrClosed", name, err)
		}
	}
	for which, cl := range map[string]*framework.Client{"client": c, "fresh client": fresh} {
		for cname, cctx := range map[string]context.Context{"live ctx": ctx, "done ctx": done} {
			at := which + ", " + cname + ": "
			want(at+"WaitBackground", cl.WaitBackground(cctx))
			want(at+"BlockUntilConnected", cl.BlockUntilConnected(cctx))
			for name, op := range pathOps(cl) {
				want(at+name, op(cctx, "/ok"))
			}
			_, err := cl.MarkNode(cctx, "/ok")
			want(at+"MarkNode", err)
			want(at+"DeleteInBackground then Wait", cl.DeleteInBackground("/ok").Wait(cctx))
			_, err = cl.Create(cctx, "/ok", nil, framework.WithProtection(), framework.WithParentChildren(),
				framework.WithMode(framework.ModeEphemeralSequential))
			want(at+"protected Create with a parent listing", err)
		}
	}
}
