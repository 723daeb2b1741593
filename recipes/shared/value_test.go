package shared_test

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/testing/zktest"
)

func startValue(t *testing.T, c *framework.Client, path string, seed []byte) *shared.Value {
	t.Helper()
	v, err := shared.NewValue(c, path, seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Start(testenv.Ctx(t, testenv.WaitLong)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func waitValue(t *testing.T, v *shared.Value, want string) {
	t.Helper()
	testenv.WaitFor(t, testenv.WaitLong, "value "+want, func() bool { return string(v.Value()) == want })
}

// Curator's testMultiClients and testSimpleVersioned: a write from one
// client is seen by the other through its watch; a stale VersionedValue
// writes nothing (checked locally first, by zxid); a fresh one writes.
func TestValueTwoClients(t *testing.T) {
	srv := testenv.Shared()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := sharedPath(t)
	a := startValue(t, testenv.Client(t, srv.ConnectString()), path, []byte("seed"))
	b := startValue(t, testenv.Client(t, srv.ConnectString()), path, []byte("other seed")) // exists: not used
	if string(a.Value()) != "seed" || string(b.Value()) != "seed" {
		t.Fatalf("values after Start: %q %q, want the first seed", a.Value(), b.Value())
	}
	stale := b.VersionedValue()
	changed := b.Changed()
	if err := a.SetValue(ctx, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if string(a.Value()) != "one" {
		t.Fatalf("the writer's value right after SetValue: %q", a.Value())
	}
	testenv.Recv(t, changed, testenv.WaitLong, "b's change")
	if got := b.VersionedValue(); string(got.Value) != "one" || got.Version != 1 || got.Zxid <= stale.Zxid {
		t.Fatalf("b after a's write: %+v (before: %+v)", got, stale)
	}
	if ok, err := b.TrySetValue(ctx, stale, []byte("lost")); ok || err != nil {
		t.Fatalf("TrySetValue over a stale value: %v %v, want false", ok, err)
	}
	if ok, err := b.TrySetValue(ctx, b.VersionedValue(), []byte("two")); !ok || err != nil {
		t.Fatalf("TrySetValue over the current value: %v %v, want true", ok, err)
	}
	waitValue(t, a, "two")
	raw, st, err := testenv.Client(t, srv.ConnectString()).Get(ctx, path)
	if err != nil || string(raw) != "two" || st.Version != 2 {
		t.Fatalf("node: %q %+v %v, want \"two\" at version 2 (the stale write wrote nothing)", raw, st, err)
	}
}

// Checklist 7.4 item 1: of N clients trying to set over the same
// version, exactly one succeeds.
func TestValueTrySetOnceAmongMany(t *testing.T) {
	srv := testenv.Shared()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := sharedPath(t)
	const n = 6
	vals := make([]*shared.Value, n)
	for i := range vals {
		vals[i] = startValue(t, testenv.Client(t, srv.ConnectString()), path, []byte("0"))
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for i, v := range vals {
		prev := v.VersionedValue()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := v.TrySetValue(ctx, prev, []byte{byte('a' + i)})
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d TrySetValue over one version succeeded, want 1", won.Load())
	}
}

// Checklist 7.4 item 2 (CURATOR-688): a node deleted by someone and made
// again (version 0 again) is followed, by zxid; a VersionedValue of the
// old node does not write over the new one. Curator's SharedValue goes
// deaf after the delete.
func TestValueDeletedAndMadeAgain(t *testing.T) {
	srv := testenv.Shared()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	admin := testenv.Client(t, srv.ConnectString())
	path := sharedPath(t)
	v := startValue(t, testenv.Client(t, srv.ConnectString()), path, []byte("x"))
	old := v.VersionedValue()
	var heard atomic.Int32
	remove := v.AddListener(func(vv shared.VersionedValue[[]byte]) {
		if string(vv.Value) == "x" && vv.Version == 0 && vv.Zxid > old.Zxid {
			heard.Add(1)
		}
	})
	defer remove()
	if err := admin.Delete(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := v.SetValue(ctx, []byte("y")); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("SetValue on a deleted node: %v, want NoNode (as Curator)", err)
	}
	if string(v.Value()) != "x" {
		t.Fatalf("value after the delete: %q, want the last one", v.Value())
	}
	if _, err := admin.Create(ctx, path, []byte("x")); err != nil { // same bytes, version 0 again
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "the re-created node followed", func() bool { return v.VersionedValue().Zxid > old.Zxid })
	testenv.WaitFor(t, testenv.WaitLong, "the listener told", func() bool { return heard.Load() == 1 })
	if ok, err := v.TrySetValue(ctx, old, []byte("z")); ok || err != nil {
		t.Fatalf("TrySetValue with the old node's version 0: %v %v, want false", ok, err)
	}
	if ok, err := v.TrySetValue(ctx, v.VersionedValue(), []byte("z")); !ok || err != nil {
		t.Fatalf("TrySetValue over the new node: %v %v", ok, err)
	}
	// Written again by someone else: followed (the watch is armed again).
	if _, err := admin.Set(ctx, path, []byte("w")); err != nil {
		t.Fatal(err)
	}
	waitValue(t, v, "w")
}

// A session lost while someone writes: the value is read again once the
// client has a new session (checklist 7.4 item 2, "after reconnects").
func TestValueAfterSessionLoss(t *testing.T) {
	srv := testenv.Shared()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	px := zktest.StartProxy(t, srv.Addr())
	c := testenv.Client(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	admin := testenv.Client(t, srv.ConnectString())
	path := sharedPath(t)
	v := startValue(t, c, path, []byte("a"))
	px.Blackhole()
	if _, err := admin.Set(ctx, path, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if string(v.Value()) != "a" {
		t.Fatalf("value seen through a black hole: %q", v.Value())
	}
	px.Heal()
	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	waitValue(t, v, "b")
	if _, err := admin.Set(ctx, path, []byte("c")); err != nil {
		t.Fatal(err)
	}
	waitValue(t, v, "c")
}

// Listeners: told of each change after Start, on one goroutine, with the
// value as it is then; removed, told nothing more.
func TestValueListener(t *testing.T) {
	srv := testenv.Shared()
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := sharedPath(t)
	v, err := shared.NewValue(testenv.Client(t, srv.ConnectString()), path, []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	got := make(chan string, 16)
	remove := v.AddListener(func(vv shared.VersionedValue[[]byte]) { got <- string(vv.Value) })
	if err := v.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w := startValue(t, testenv.Client(t, srv.ConnectString()), path, nil)
	for _, s := range []string{"1", "2", "3"} {
		if err := w.SetValue(ctx, []byte(s)); err != nil {
			t.Fatal(err)
		}
		// Each write waited for: the listener sees each (no coalescing).
		for last := ""; last != s; {
			last = testenv.Recv(t, got, testenv.WaitLong, "the change to "+s)
		}
	}
	remove()
	changed := v.Changed()
	if err := w.SetValue(ctx, []byte("4")); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, changed, testenv.WaitLong, "the change to 4")
	if err := v.Close(); err != nil { // waits for the delivery goroutine
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s == "4" {
			t.Fatal("a removed listener was told")
		}
	default:
	}
}

// Bad input: typed errors, nothing written.
func TestValueBadInput(t *testing.T) {
	srv := testenv.Shared()
	c := testenv.Client(t, srv.ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := sharedPath(t)
	_, errNil := shared.NewValue(nil, "/v", nil)
	_, errPath := shared.NewValue(c, "v", nil)
	_, errRoot := shared.NewCount(c, "/", 0)
	_, errSeed := shared.NewCount(c, "/v", 1<<31)
	_, errCountPath := shared.NewCount(c, "/v/", 1)
	unstarted, err := shared.NewValue(c, path, []byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	errCtx := unstarted.Start(nil) //nolint:staticcheck
	_, errVersion := unstarted.TrySetValue(ctx, unstarted.VersionedValue(), []byte("x"))
	count := startCount(t, c, path+"-count", 1)
	errBig := count.SetCount(ctx, 1<<32+1)
	_, errTryBig := count.TrySetCount(ctx, count.VersionedValue(), -1<<40)
	for name, err := range map[string]error{
		"nil client": errNil, "relative path": errPath, "count at /": errRoot, "seed past int32": errSeed,
		"count bad path": errCountPath, "nil ctx": errCtx, "TrySetValue before Start": errVersion,
		"SetCount past int32": errBig, "TrySetCount past int32": errTryBig,
	} {
		if !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, _, err := c.Get(ctx, path); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("a value never started made its node: %v", err)
	}
	if raw, _, err := c.Get(ctx, path+"-count"); err != nil || !bytes.Equal(raw, []byte{0, 0, 0, 1}) {
		t.Errorf("count after refused writes: %x %v, want 00000001", raw, err)
	}
}
