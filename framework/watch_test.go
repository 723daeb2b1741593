package framework_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// serverWatchers returns the ids of the sessions the server has a data or
// exists watch of on the server path p for (wchp lists no child watches).
func serverWatchers(t testing.TB, p string) []int64 {
	t.Helper()
	byPath, err := testenv.Shared().WatchesByPath()
	if err != nil {
		t.Fatal(err)
	}
	return byPath[p]
}

func wantStats(t testing.TB, c *framework.Client, armed, waiters int) {
	t.Helper()
	if a, w := c.WatchStats(); a != armed || w != waiters {
		t.Fatalf("WatchStats = %d armed, %d waiters; want %d, %d", a, w, armed, waiters)
	}
}

// GetW on a missing node fails with zk.ErrNoNode and leaves no watch on
// the server nor in the client.
func TestGetWMissingNodeLeavesNoWatch(t *testing.T) {
	ns := testenv.Uniq("watch")
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/present", nil); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		_, _, w, err := c.GetW(ctx, "/absent")
		if !errors.Is(err, zk.ErrNoNode) || w != nil {
			t.Fatalf("GetW on a missing node = %v, %v; want nil, ErrNoNode", w, err)
		}
	}
	_, _, w, err := c.ChildrenW(ctx, "/absent")
	if !errors.Is(err, zk.ErrNoNode) || w != nil {
		t.Fatalf("ChildrenW on a missing node = %v, %v; want nil, ErrNoNode", w, err)
	}
	wantStats(t, c, 0, 0)
	// A watch that is set, on another node, shows up: the probe works.
	_, _, w, err = c.GetW(ctx, "/present")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	testenv.Eventually(t, testenv.WaitShort, "the server lists the watch on /present", func() error {
		if got := serverWatchers(t, "/"+ns+"/present"); !slices.Equal(got, []int64{c.Session().ID()}) {
			return fmt.Errorf("watchers of /present: %x", got)
		}
		return nil
	})
	if got := serverWatchers(t, "/"+ns+"/absent"); len(got) != 0 {
		t.Fatalf("the server watches /absent for %x", got)
	}
	wantStats(t, c, 1, 1)
}

// 100 waiters that GetW one node and Stop leave exactly one server watch
// (the demultiplexer arms one and reuses it) and no waiter.
func TestGetWStopManyWaiters(t *testing.T) {
	ns := testenv.Uniq("watch")
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/node", []byte("v")); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		d, _, w, err := c.GetW(ctx, "/node")
		if err != nil || string(d) != "v" {
			t.Fatalf("GetW #%d = %q, %v", i, d, err)
		}
		w.Stop()
		w.Stop() // idempotent
	}
	wantStats(t, c, 1, 0)
	wc, err := testenv.Shared().WatchesBySession()
	if err != nil {
		t.Fatal(err)
	}
	if got := wc[c.Session().ID()]; !slices.Equal(got, []string{"/" + ns + "/node"}) {
		t.Fatalf("server watches of the session: %v, want exactly one on /%s/node", got, ns)
	}

	// The spent server watch fires into nobody; afterwards nothing is left.
	if _, err := c.Set(ctx, "/node", []byte("w")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.WaitShort, "the fired watch is forgotten", func() error {
		if a, w := c.WatchStats(); a != 0 || w != 0 {
			return fmt.Errorf("WatchStats = %d, %d", a, w)
		}
		return nil
	})
	if got := serverWatchers(t, "/"+ns+"/node"); len(got) != 0 {
		t.Fatalf("server watchers of /node after it fired: %x", got)
	}
}

// A fired watch delivers exactly one event to each of its waiters, with
// the caller's path; a later change delivers nothing more.
func TestWatchFiresOnce(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("watch")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/node", []byte("v")); err != nil {
		t.Fatal(err)
	}
	_, _, w1, err := c.GetW(ctx, "/node")
	if err != nil {
		t.Fatal(err)
	}
	_, _, w2, err := c.GetW(ctx, "/node")
	if err != nil {
		t.Fatal(err)
	}
	okE, _, we, err := c.ExistsW(ctx, "/node")
	if err != nil || !okE {
		t.Fatalf("ExistsW = %v, %v", okE, err)
	}
	_, _, wc, err := c.ChildrenW(ctx, "/node")
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Stop()
	wantStats(t, c, 3, 4)

	if _, err := c.Set(ctx, "/node", []byte("w")); err != nil {
		t.Fatal(err)
	}
	for i, w := range []*framework.Watch{w1, w2, we} {
		if ev := waitEvent(t, w, testenv.WaitShort); ev.Type != framework.EventNodeDataChanged || ev.Path != "/node" || ev.Err != nil {
			t.Fatalf("waiter %d got %+v", i, ev)
		}
	}
	// A child watch does not fire on a data change.
	select {
	case ev := <-wc.C():
		t.Fatalf("child watch fired on a data change: %+v", ev)
	default:
	}
	wantStats(t, c, 1, 1)

	// Another change: the spent watches deliver nothing more.
	if _, err := c.Set(ctx, "/node", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/node/kid", nil); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, wc, testenv.WaitShort); ev.Type != framework.EventNodeChildrenChanged || ev.Path != "/node" {
		t.Fatalf("child watch got %+v", ev)
	}
	for i, w := range []*framework.Watch{w1, w2, we} {
		select {
		case ev, ok := <-w.C():
			t.Fatalf("waiter %d got a second event %+v (open %v)", i, ev, ok)
		default:
		}
	}
	wantStats(t, c, 0, 0)

	// ExistsW on a missing node watches for its creation.
	okE, _, we, err = c.ExistsW(ctx, "/later")
	if err != nil || okE {
		t.Fatalf("ExistsW(/later) = %v, %v", okE, err)
	}
	if _, err := c.Create(ctx, "/later", nil); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, we, testenv.WaitShort); ev.Type != framework.EventNodeCreated || ev.Path != "/later" {
		t.Fatalf("exists watch got %+v", ev)
	}
	// Deletion fires data and child watches.
	_, _, wd, err := c.GetW(ctx, "/later")
	if err != nil {
		t.Fatal(err)
	}
	_, _, wk, err := c.ChildrenW(ctx, "/later")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/later"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*framework.Watch{wd, wk} {
		if ev := waitEvent(t, w, testenv.WaitShort); ev.Type != framework.EventNodeDeleted {
			t.Fatalf("got %+v, want NodeDeleted", ev)
		}
	}
}

// Close ends every waiting watch with EventNotWatching / ErrClosed.
func TestCloseEndsWatches(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("watch")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/node", nil); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW(ctx, "/node")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case ev := <-w.C():
		if ev.Type != framework.EventNotWatching || !errors.Is(ev.Err, curator.ErrClosed) {
			t.Fatalf("event on Close: %+v", ev)
		}
	case <-time.After(testenv.WaitShort):
		t.Fatal("no event on Close")
	}
	w.Stop()
}

// Many waiters come and go on one node while it keeps changing: every
// waiter that waits gets its event, and once the changes stop and the
// last watch fired, nothing is left in the client.
func TestWatchConcurrentWaiters(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("watch")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/node", nil); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	setterDone := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				setterDone <- nil
				return
			case <-time.After(5 * time.Millisecond): // pacing, not synchronization
			}
			if _, err := c.Set(ctx, "/node", []byte{byte(i)}); err != nil {
				setterDone <- err
				return
			}
		}
	}()
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 40 {
				_, _, w, err := c.GetW(ctx, "/node")
				if err != nil {
					errs <- err
					return
				}
				if (g+i)%2 == 0 {
					w.Stop()
					continue
				}
				select {
				case ev := <-w.C():
					if ev.Type != framework.EventNodeDataChanged {
						errs <- fmt.Errorf("event %+v", ev)
						return
					}
				case <-ctx.Done():
					errs <- errors.New("a waiter never got its event")
					return
				}
				w.Stop()
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-setterDone; err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, "/node", []byte("last")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.WaitShort, "nothing left in the client", func() error {
		if a, w := c.WatchStats(); a != 0 || w != 0 {
			return fmt.Errorf("WatchStats = %d, %d", a, w)
		}
		return nil
	})
}
