package framework_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// AfterFunc delivers the event to a function instead of C: once, whether
// the event came before or after AfterFunc; never after Stop; and with
// the client's Close, as NotWatching.
func TestWatchAfterFunc(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("watch")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	for _, p := range []string{"/after", "/before", "/stopped", "/closed"} {
		if _, err := c.Create(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan framework.Event, 10)
	f := func(ev framework.Event) { got <- ev }
	watch := func(p string) *framework.Watch {
		_, _, w, err := c.GetW(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	// The event after AfterFunc.
	w := watch("/after")
	w.AfterFunc(f)
	if _, err := c.Set(ctx, "/after", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if ev := testenv.Recv(t, got, testenv.WaitLong, "the event"); ev.Type != framework.EventNodeDataChanged || ev.Path != "/after" {
		t.Fatalf("event %+v", ev)
	}

	// The event before AfterFunc: still delivered, once, and not on C.
	w = watch("/before")
	if err := c.Delete(ctx, "/before"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "the event on C", func() bool { return len(w.C()) == 1 })
	w.AfterFunc(f)
	if ev := testenv.Recv(t, got, testenv.WaitLong, "the earlier event"); ev.Type != framework.EventNodeDeleted || ev.Path != "/before" {
		t.Fatalf("event %+v", ev)
	}
	if len(w.C()) != 0 {
		t.Error("the event also left on C")
	}

	// Stopped: never called. The server sends the set's notification
	// before the marker's, and the client calls the functions in the
	// order of their events: a stray call would come first.
	w = watch("/stopped")
	w.AfterFunc(f)
	w.Stop()
	if _, err := c.Set(ctx, "/stopped", []byte("x")); err != nil {
		t.Fatal(err)
	}
	marker := watch("/after")
	marker.AfterFunc(f)
	if _, err := c.Set(ctx, "/after", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if ev := testenv.Recv(t, got, testenv.WaitLong, "the marker's event"); ev.Path != "/after" {
		t.Fatalf("a stopped watch's function was called: %+v", ev)
	}

	// The client's Close ends the watch: NotWatching, ErrClosed.
	w = watch("/closed")
	w.AfterFunc(f)
	c.Close()
	if ev := testenv.Recv(t, got, testenv.WaitLong, "the event on Close"); ev.Type != framework.EventNotWatching || !errors.Is(ev.Err, curator.ErrClosed) {
		t.Fatalf("event on Close: %+v", ev)
	}
	if a, n := c.WatchStats(); a != 0 || n != 0 {
		t.Errorf("WatchStats after Close: %d armed, %d waiters", a, n)
	}
}
