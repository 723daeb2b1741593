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
	catomic "github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/testing/zktest"
)

// A write that took effect but whose reply was lost (the proxy drops the
// connection with the reply held): Curator's retry would fail on the
// version its own write moved, read the new value and add again. Here
// the increment is applied once, and the caller is told its outcome is
// unknown (ErrConnectionLoss), not that it succeeded nor that it failed.
// The same for the create of a missing node.
func TestLostReplyNotDoubled(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   zktest.Op
		init bool
	}{{"set", zktest.OpSetData, true}, {"create", zktest.OpMulti, false}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testenv.Shared()
			px := zktest.StartProxy(t, srv.Addr())
			c := testenv.Client(t, px.Addr()+srv.Chroot())
			ctx := testenv.Ctx(t, testenv.WaitLong)
			path := atomicPath(t)
			l := newLong(t, c, path)
			if tc.init {
				if ok, err := l.Initialize(ctx, 41); !ok || err != nil {
					t.Fatal(ok, err)
				}
			}
			held := px.HoldReply(tc.op)
			type out struct {
				r   catomic.Result[int64]
				err error
			}
			done := make(chan out, 1)
			go func() { r, err := l.Increment(ctx); done <- out{r, err} }()
			if err := held.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			held.Drop()
			o := testenv.Recv(t, done, testenv.WaitLong, "the increment")
			if !errors.Is(o.err, curator.ErrConnectionLoss) || o.r.Succeeded {
				t.Fatalf("increment whose reply was lost: %+v %v, want ErrConnectionLoss (outcome unknown)", o.r, o.err)
			}
			want := int64(42)
			if !tc.init {
				want = 1
			}
			r, err := newLong(t, testenv.Client(t, srv.ConnectString()), path).Get(ctx)
			if err != nil || r.PreValue != want {
				t.Fatalf("counter %d %v, want %d: the increment applied exactly once", r.PreValue, err, want)
			}
		})
	}
}

// A write that fails before it reaches the server (the connection is
// dropped just before it is sent) is found not applied by the read and
// sent again: the increment succeeds, once.
func TestDroppedBeforeWriteRetried(t *testing.T) {
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := testenv.Client(t, px.Addr()+srv.Chroot())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := atomicPath(t)
	l := newLong(t, c, path)
	if ok, err := l.Initialize(ctx, 7); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var drops atomic.Int32
	catomic.SetWriteHook(func(string) {
		if drops.Add(1) <= 2 {
			px.Drop()
		}
	})
	t.Cleanup(func() { catomic.SetWriteHook(nil) })
	r, err := l.Increment(ctx)
	catomic.SetWriteHook(nil)
	if err != nil || !r.Succeeded || r.PreValue != 7 || r.PostValue != 8 {
		t.Fatalf("increment across dropped connections: %+v %v, want 7 -> 8", r, err)
	}
	got, err := newLong(t, testenv.Client(t, srv.ConnectString()), path).Get(ctx)
	if err != nil || got.PreValue != 8 {
		t.Fatalf("counter %d %v, want 8", got.PreValue, err)
	}
}

// Checklist 7.4 item 3 under faults: goroutines increment through a
// proxy whose connections are dropped and whose session is expired, over
// and over. No increment the caller was told succeeded is lost or
// doubled: the counter ends between the increments that succeeded and
// those plus the ones whose outcome was unknown; every other error wrote
// nothing.
func TestIncrementsUnderFaults(t *testing.T) {
	srv := testenv.Shared()
	ctx := testenv.Ctx(t, 3*testenv.WaitLong)
	px := zktest.StartProxy(t, srv.Addr())
	faulty := testenv.Client(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	steady := testenv.Client(t, srv.ConnectString())
	path := atomicPath(t)
	var succeeded, unknown, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 6 {
		c := steady
		if i%2 == 0 {
			c = faulty
		}
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
		testenv.WaitFor(t, testenv.WaitLong, "increments going on", func() bool { return succeeded.Load() >= n })
	}
	progress(20)
	for i := range 3 {
		px.Drop()
		progress(succeeded.Load() + 10)
		if i == 1 {
			if err := zktest.ExpireSession(ctx, px, srv, faulty.Session().ID()); err != nil {
				t.Fatal(err)
			}
			progress(succeeded.Load() + 10)
		}
		held := px.HoldReply(zktest.OpSetData)
		if err := held.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		held.Drop()
		progress(succeeded.Load() + 10)
	}
	close(stop)
	wg.Wait()
	r, err := newLong(t, steady, path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, u := succeeded.Load(), unknown.Load()
	t.Logf("counter %d: %d succeeded, %d unknown, %d failed", r.PreValue, s, u, failed.Load())
	if r.PreValue < s || r.PreValue > s+u {
		t.Fatalf("counter %d, want between %d (succeeded) and %d (plus unknown)", r.PreValue, s, s+u)
	}
	if u == 0 {
		t.Error("no increment of unknown outcome: the held reply's increment was not seen")
	}
}

// WithoutFirstRead: a counter object that wrote last writes its next
// increment over what it wrote, without reading first (one round trip);
// once another writer came between, that write loses on the version, the
// node is read, and the increment lands on the other's value.
func TestWithoutFirstReadOneRoundTrip(t *testing.T) {
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := testenv.Client(t, px.Addr()+srv.Chroot())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := atomicPath(t)
	l := newLong(t, c, path, patient(t), catomic.WithoutFirstRead())
	if _, err := l.Increment(ctx); err != nil { // creates the node
		t.Fatal(err)
	}
	if _, err := l.Increment(ctx); err != nil { // reads, writes: known since
		t.Fatal(err)
	}
	px.ResetCounts()
	for i := range 5 {
		if r, err := l.Increment(ctx); err != nil || r.PostValue != int64(3+i) || r.Stats.OptimisticTries != 1 {
			t.Fatalf("Increment: %+v %v", r, err)
		}
	}
	if gets, sets := px.Requests(zktest.OpGetData), px.Requests(zktest.OpSetData); gets != 0 || sets != 5 {
		t.Fatalf("5 increments by the last writer: %d reads and %d writes, want 0 and 5", gets, sets)
	}
	other := newLong(t, testenv.Client(t, srv.ConnectString()), path)
	if _, err := other.Add(ctx, 100); err != nil {
		t.Fatal(err)
	}
	r, err := l.Increment(ctx)
	if err != nil || r.PreValue != 107 || r.PostValue != 108 || r.Stats.OptimisticTries != 2 {
		t.Fatalf("Increment after another writer: %+v %v, want 107 -> 108 in 2 tries", r, err)
	}
}

// By default every operation reads first: a counter deleted and made
// again (an operator's reset) whose other writers brought it back to the
// version this object last saw is read, never written over with a value
// computed from the old node (which WithoutFirstRead would do: its
// version check cannot tell the two nodes apart).
func TestFirstReadSeesANodeMadeAgain(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := testenv.Client(t, testenv.Shared().ConnectString())
	path := atomicPath(t)
	l := newLong(t, c, path, patient(t))
	for range 3 { // the node made, then at version 2, value 3
		if _, err := l.Increment(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, st, err := c.Get(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// The reset: deleted, made again at 1000, and written back up to the
	// version this object last saw.
	if err := c.Delete(ctx, path); err != nil {
		t.Fatal(err)
	}
	other := newLong(t, testenv.Client(t, testenv.Shared().ConnectString()), path, patient(t))
	if ok, err := other.Initialize(ctx, 1000); err != nil || !ok {
		t.Fatalf("Initialize: %v %v", ok, err)
	}
	for {
		_, now, err := c.Get(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if now.Version == st.Version {
			break
		}
		if _, err := other.Add(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	r, err := l.Increment(ctx)
	if err != nil || r.PreValue != 1000 || r.PostValue != 1001 {
		t.Fatalf("Increment after the reset: %+v %v, want 1000 -> 1001", r, err)
	}
}
