package framework_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// Session timeouts ZooKeeper's int32 milliseconds cannot carry (or that
// round to 0 ms) are rejected by New; the largest one it can carry is
// accepted and connects (the server caps it to its maximum).
func TestSessionTimeoutBounds(t *testing.T) {
	good := testenv.Shared().ConnectString()
	for _, d := range []time.Duration{
		time.Duration(math.MaxInt32+1) * time.Millisecond,
		math.MaxInt64,
		999 * time.Microsecond,
	} {
		c, err := framework.New(good, framework.WithSessionTimeout(d))
		if err == nil {
			c.Close()
			t.Errorf("New with session timeout %v succeeded", d)
		} else if !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("New with session timeout %v: %v, want ErrInvalidArgument", d, err)
		}
	}
	for _, n := range []int{0, -1, math.MaxInt32} {
		if _, err := framework.New(good, framework.WithJuteMaxBuffer(n)); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("New with WithJuteMaxBuffer(%d): %v, want ErrInvalidArgument", n, err)
		}
	}
	c := newClient(t, good, framework.WithSessionTimeout(time.Duration(math.MaxInt32)*time.Millisecond))
	if _, _, err := c.Exists(testenv.Ctx(t, testenv.WaitShort), "/"); err != nil {
		t.Fatal(err)
	}
}

// Waits given a nil context return ErrInvalidArgument instead of panicking.
func TestNilContextWaits(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("nilctx")))
	var nilCtx context.Context
	if err := c.WaitBackground(nilCtx); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("WaitBackground(nil): %v, want ErrInvalidArgument", err)
	}
	if err := (&framework.DeletePendingError{}).Wait(nilCtx); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("DeletePendingError.Wait(nil): %v, want ErrInvalidArgument", err)
	}
	if err := c.DeleteInBackground("/x").Wait(nilCtx); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("BackgroundDelete.Wait(nil): %v, want ErrInvalidArgument", err)
	}
}

// DeleteInBackground tells its caller the outcome: done, refused by the
// server (not empty, no permission), refused before any I/O.
func TestDeleteInBackgroundOutcome(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("bgout")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/gone", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/full/child", nil, framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	// Deleting a child needs DELETE permission on its parent.
	if _, err := c.Create(ctx, "/guarded", nil, framework.WithACL(zk.WorldACL(zk.PermRead|zk.PermCreate)...)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/guarded/child", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want error
	}{
		{"/gone", nil},
		{"/missing", nil},
		{"/full", zk.ErrNotEmpty},
		{"/guarded/child", zk.ErrNoAuth},
		{"/bad/", curator.ErrInvalidPath},
		{"/", curator.ErrInvalidPath},
	} {
		d := c.DeleteInBackground(tc.path)
		err := d.Wait(ctx)
		if (tc.want == nil && err != nil) || !errors.Is(err, tc.want) {
			t.Errorf("DeleteInBackground(%q): %v, want %v", tc.path, err, tc.want)
		}
		select {
		case <-d.Done():
		default:
			t.Errorf("DeleteInBackground(%q): Done not closed after Wait", tc.path)
		}
	}
	if ok, _, err := c.Exists(ctx, "/gone"); err != nil || ok {
		t.Fatalf("/gone after its background delete: exists=%v, %v", ok, err)
	}
	if err := c.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
}

// WithListener hears every state from the first CONNECTED (it is in place
// before the client dials); a nil one is refused; a New that fails leaves
// no listener goroutine behind (goleak checks at the end of the run).
func TestWithListener(t *testing.T) {
	if _, err := framework.New(testenv.Shared().ConnectString(), framework.WithListener(nil)); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("WithListener(nil): %v, want ErrInvalidArgument", err)
	}
	if _, err := framework.New("no-such-host.invalid:2181", framework.WithListener(func(framework.State) {})); err == nil {
		t.Error("New with an unresolvable host succeeded")
	}
	first := make(chan framework.State, 4)
	newClient(t, testenv.Shared().ConnectString(), framework.WithListener(func(s framework.State) {
		select {
		case first <- s:
		default:
		}
	}))
	select {
	case s := <-first:
		if s != framework.StateConnected {
			t.Fatalf("first state heard: %v, want CONNECTED", s)
		}
	case <-time.After(testenv.WaitShort):
		t.Fatal("the listener heard nothing")
	}
}
