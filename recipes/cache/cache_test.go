package cache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// eachMode runs a test's body once per watch mode of the cache: the
// persistent recursive watch (the default on ZooKeeper 3.6+) and one-shot
// watches (WithOneShotWatches, and the fallback on older servers).
func eachMode(t *testing.T, body func(t *testing.T)) {
	for _, m := range []struct {
		name    string
		oneShot bool
	}{{"recursive", false}, {"oneshot", true}} {
		t.Run(m.name, func(t *testing.T) {
			restore := cache.SetDefaultOneShot(m.oneShot)
			defer restore()
			body(t)
		})
	}
}

func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.Client(t, connect, append([]framework.Option{framework.WithRetryPolicy(testenv.Patient{})}, opts...)...)
}

// readTree reads root's subtree with a bare client: what the cache must
// equal once changes stop.
func readTree(ctx context.Context, c *framework.Client, root string) (map[string]cache.Node, error) {
	out := map[string]cache.Node{}
	var walk func(p string) error
	walk = func(p string) error {
		data, st, err := c.Get(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		kids, _, err := c.Children(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		out[p] = cache.Node{Path: p, Data: data, Stat: *st}
		for _, k := range kids {
			if err := walk(framework.JoinPath(p, k)); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root)
}

// same reports the first difference between a cache's view and the tree.
func same(got, want map[string]cache.Node) error {
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			return fmt.Errorf("%s missing", p)
		}
		if !bytes.Equal(g.Data, w.Data) || g.Stat.Mzxid != w.Stat.Mzxid || g.Stat.Czxid != w.Stat.Czxid {
			return fmt.Errorf("%s: %q (mzxid %d), want %q (mzxid %d)", p, g.Data, g.Stat.Mzxid, w.Data, w.Stat.Mzxid)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			return fmt.Errorf("%s cached, not in the tree", p)
		}
	}
	return nil
}

// consumer applies a cache's events to a map, as a user would, and
// checks them: never a create for a present path nor a change or delete
// of an absent one; a change's or delete's Old is what the previous
// event of the node said (its New); and each path's events never go back
// in mzxid or version, across deletes and re-creates too.
type consumer struct {
	t        *testing.T
	mu       sync.Mutex
	m        map[string]cache.Node
	last     map[string]int64 // each path's highest mzxid told, deletes included
	inited   int
	rebuilt  int
	count    int
	problems []string
	atInit   map[string]cache.Node // m when Initialized came
}

func newConsumer(t *testing.T) *consumer {
	return &consumer{t: t, m: map[string]cache.Node{}, last: map[string]int64{}}
}

func (k *consumer) problem(format string, args ...any) {
	k.problems = append(k.problems, fmt.Sprintf(format, args...))
}

// told checks that old is what the consumer was last told of its path.
func (k *consumer) told(what string, old *cache.Node) {
	cur, ok := k.m[old.Path]
	if !ok {
		k.problem("%s, never created: %s", what, old.Path)
		return
	}
	if !bytes.Equal(cur.Data, old.Data) || cur.Stat != old.Stat {
		k.problem("%s %s: old is mzxid %d %q, the previous event said mzxid %d %q", what, old.Path, old.Stat.Mzxid, old.Data, cur.Stat.Mzxid, cur.Data)
	}
}

func (k *consumer) on(ev cache.Event) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.count++
	switch ev.Type {
	case cache.EventInitialized:
		k.inited++
		if k.inited == 1 {
			k.atInit = maps(k.m)
		}
	case cache.EventRebuilt:
		k.rebuilt++
	case cache.EventCreated:
		if _, ok := k.m[ev.Path]; ok {
			k.problem("created twice: %s", ev.Path)
		}
		if last, ok := k.last[ev.Path]; ok && ev.New.Stat.Mzxid <= last {
			k.problem("%s went back: created at mzxid %d after %d", ev.Path, ev.New.Stat.Mzxid, last)
		}
		k.m[ev.Path] = *ev.New
		k.last[ev.Path] = ev.New.Stat.Mzxid
	case cache.EventChanged:
		k.told("changed", ev.Old)
		if ev.New.Stat.Czxid != ev.Old.Stat.Czxid || ev.New.Stat.Mzxid <= ev.Old.Stat.Mzxid || ev.New.Stat.Version <= ev.Old.Stat.Version {
			k.problem("%s went back: mzxid %d version %d after %d %d", ev.Path, ev.New.Stat.Mzxid, ev.New.Stat.Version, ev.Old.Stat.Mzxid, ev.Old.Stat.Version)
		}
		k.m[ev.Path] = *ev.New
		k.last[ev.Path] = ev.New.Stat.Mzxid
	case cache.EventDeleted:
		k.told("deleted", ev.Old)
		delete(k.m, ev.Path)
	}
}

func (k *consumer) snapshot() map[string]cache.Node {
	k.mu.Lock()
	defer k.mu.Unlock()
	return maps(k.m)
}

func maps(m map[string]cache.Node) map[string]cache.Node {
	out := make(map[string]cache.Node, len(m))
	for p, n := range m {
		out[p] = n
	}
	return out
}

// converged waits until the cache and the consumer both equal the tree.
func converged(t *testing.T, ctx context.Context, reader *framework.Client, cc *cache.Cache, k *consumer, root string) {
	t.Helper()
	testenv.Eventually(t, testenv.WaitLong, "the cache equal to the tree", func() error {
		tree, err := readTree(ctx, reader, root)
		if err != nil {
			return err
		}
		if err := same(cc.Snapshot(), tree); err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		if k != nil {
			if err := same(k.snapshot(), tree); err != nil {
				return fmt.Errorf("events: %w", err)
			}
		}
		return nil
	})
	if k != nil {
		k.mu.Lock()
		defer k.mu.Unlock()
		if len(k.problems) > 0 {
			t.Errorf("events: %q", k.problems)
		}
	}
}

func startCache(t *testing.T, ctx context.Context, c *framework.Client, root string, k *consumer, opts ...cache.Option) *cache.Cache {
	t.Helper()
	cc, err := cache.New(c, root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if k != nil {
		cc.AddListener(k.on)
	}
	if err := cc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return cc
}

func mk(t *testing.T, ctx context.Context, c *framework.Client, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := c.Create(ctx, p, []byte(framework.NodeName(p)), framework.WithParents()); err != nil {
			t.Fatal(err)
		}
	}
}

// The first load delivers every node, parents first, then Initialized;
// later changes are one event each, with the old and new node; Close
// leaves no waiter and no goroutine of the cache.
func TestCacheBasic(t *testing.T) { eachMode(t, testCacheBasic) }

func testCacheBasic(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	other := newClient(t, testenv.Shared().ConnectString())
	root := testenv.Path(t, "/cache")
	mk(t, ctx, other, root+"/a/x", root+"/b")
	k := newConsumer(t)
	var mu sync.Mutex
	var order []string
	cc := startCache(t, ctx, c, root, k)
	cc.AddListener(func(ev cache.Event) {
		if ev.Path != "" { // Initialized may come after Start returned
			mu.Lock()
			order = append(order, ev.Type.String()+" "+ev.Path)
			mu.Unlock()
		}
	})
	converged(t, ctx, other, cc, k, root)
	if !cache.DefaultOneShot() {
		m, err := testenv.Shared().WatchesByPath()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(m[testenv.Shared().Chroot()+root]); n != 1 {
			t.Errorf("%d sessions watch the root, want the cache's", n)
		}
	}
	// The load's events may reach a listener added after Start returned
	// (Start returns once the load is cached, not delivered): a fence
	// node's event comes after them all.
	mk(t, ctx, other, root+"/fence")
	testenv.WaitFor(t, testenv.WaitShort, "the fence's event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(order, "created "+root+"/fence")
	})
	mu.Lock()
	order = nil
	mu.Unlock()
	if k.inited != 1 {
		t.Errorf("%d Initialized events, want 1", k.inited)
	}
	if n, ok := cc.Get(root + "/a/x"); !ok || string(n.Data) != "x" {
		t.Errorf("Get(a/x) = %+v, %v", n, ok)
	}

	if _, err := other.Set(ctx, root+"/a", []byte("a2")); err != nil {
		t.Fatal(err)
	}
	mk(t, ctx, other, root+"/c")
	if err := other.Delete(ctx, root+"/a/x"); err != nil {
		t.Fatal(err)
	}
	converged(t, ctx, other, cc, k, root)
	testenv.Eventually(t, testenv.WaitShort, "three events", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(order) != 3 {
			return fmt.Errorf("events %q", order)
		}
		return nil
	})
	mu.Lock()
	got := slices.Clone(order)
	mu.Unlock()
	sort.Strings(got)
	want := []string{"changed " + root + "/a", "created " + root + "/c", "deleted " + root + "/a/x"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}

	if err := cc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, w := c.WatchStats(); w != 0 {
		t.Errorf("%d watch waiters after Close", w)
	}
	if !cache.DefaultOneShot() { // Close removed the recursive watch from the server
		m, err := testenv.Shared().WatchesByPath()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(m[testenv.Shared().Chroot()+root]); n != 0 {
			t.Errorf("%d sessions watch the root after Close", n)
		}
	}
	if err := cc.Start(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}
}

// Thousands of random creates, sets and deletes from three other
// sessions, with the cache's connection dropped twice on the way: once
// the changes stop, the cache, and a map built from its events alone,
// equal the tree a bare client reads; no node's events went back.
func TestCacheConvergesUnderChurn(t *testing.T) { eachMode(t, testCacheConvergesUnderChurn) }

func testCacheConvergesUnderChurn(t *testing.T) {
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot())
	reader := newClient(t, srv.ConnectString())
	root := testenv.Path(t, "/churn")
	mk(t, ctx, reader, root)
	k := newConsumer(t)
	cc := startCache(t, ctx, c, root, k)
	ch := startChurn(t, ctx, srv.ConnectString(), root, 3, 700)
	ch.waitOps(t, 600)
	px.Drop()
	ch.waitOps(t, 1350)
	px.Drop()
	ch.stop()
	converged(t, ctx, reader, cc, k, root)
	if k.rebuilt != 0 {
		t.Errorf("%d Rebuilt events for reconnections in the same session", k.rebuilt)
	}
}

// After a session expiry the cache reads everything again, reports only
// real differences, and says it rebuilt.
func TestCacheRebuildsAfterSessionExpiry(t *testing.T) {
	eachMode(t, testCacheRebuildsAfterSessionExpiry)
}

func testCacheRebuildsAfterSessionExpiry(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	reader := newClient(t, srv.ConnectString())
	root := testenv.Path(t, "/rebuild")
	mk(t, ctx, reader, root+"/a", root+"/b", root+"/c/d")
	k := newConsumer(t)
	cc := startCache(t, ctx, c, root, k)
	converged(t, ctx, reader, cc, k, root)
	k.mu.Lock()
	before := k.count
	k.mu.Unlock()
	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Set(ctx, root+"/a", []byte("while expired")); err != nil {
		t.Fatal(err)
	}
	if err := reader.Delete(ctx, root+"/c/d"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "EventRebuilt", func() bool { k.mu.Lock(); defer k.mu.Unlock(); return k.rebuilt == 1 })
	converged(t, ctx, reader, cc, k, root)
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := k.count - before; n != 3 { // changed a, deleted c/d, rebuilt
		t.Errorf("%d events after the expiry, want 3 (a changed, c/d deleted, rebuilt): no false deletes and creates", n)
	}
}

// WithMaxDepth and WithFilter bound what is cached.
func TestCacheDepthAndFilter(t *testing.T) { eachMode(t, testCacheDepthAndFilter) }

func testCacheDepthAndFilter(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	root := testenv.Path(t, "/depth")
	mk(t, ctx, c, root+"/a/x", root+"/skip/y")
	keys := func(cc *cache.Cache) []string {
		var ks []string
		for p := range cc.Snapshot() {
			ks = append(ks, p)
		}
		sort.Strings(ks)
		return ks
	}
	for _, tc := range []struct {
		opts []cache.Option
		want []string
	}{
		{[]cache.Option{cache.WithMaxDepth(0)}, []string{root}},
		{[]cache.Option{cache.WithMaxDepth(1)}, []string{root, root + "/a", root + "/skip"}},
		{[]cache.Option{cache.WithFilter(func(p string) bool { return p != root+"/skip" })}, []string{root, root + "/a", root + "/a/x"}},
	} {
		cc := startCache(t, ctx, c, root, nil, tc.opts...)
		if got := keys(cc); !slices.Equal(got, tc.want) {
			t.Errorf("cached %q, want %q", got, tc.want)
		}
		cc.Close()
	}
	cc := startCache(t, ctx, c, root, nil, cache.WithoutData())
	if n, _ := cc.Get(root + "/a"); n.Data != nil || n.Stat.Czxid == 0 {
		t.Errorf("WithoutData: %+v", n)
	}
}

// A consumer that stops reading never slows the cache: the changes of a
// node coalesce, and the last state is delivered once it reads again.
func TestCacheSlowConsumerCoalesces(t *testing.T) { eachMode(t, testCacheSlowConsumerCoalesces) }

func testCacheSlowConsumerCoalesces(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	other := newClient(t, testenv.Shared().ConnectString())
	root := testenv.Path(t, "/slow")
	mk(t, ctx, other, root+"/n")
	cc := startCache(t, ctx, c, root, nil)
	events := cc.Events() // not read while the changes are made
	for i := range 100 {
		if _, err := other.Set(ctx, root+"/n", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, testenv.WaitLong, "the cache at the last change", func() bool {
		n, _ := cc.Get(root + "/n")
		return string(n.Data) == "99"
	})
	var got []cache.Event
	for len(got) == 0 || string(got[len(got)-1].New.Data) != "99" {
		ev := testenv.Recv(t, events, testenv.WaitShort, "an event")
		if ev.Path == root+"/n" && ev.New != nil {
			got = append(got, ev)
		}
	}
	if len(got) > 3 {
		t.Errorf("%d events for 100 changes read late: not coalesced", len(got))
	}
}

// Bad input is refused with typed errors.
func TestCacheBadInput(t *testing.T) { eachMode(t, testCacheBadInput) }

func testCacheBadInput(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString())
	for what, f := range map[string]func() error{
		"nil client": func() error { _, err := cache.New(nil, "/x"); return err },
		"bad path":   func() error { _, err := cache.New(c, "x"); return err },
		"nil filter": func() error { _, err := cache.New(c, "/x", cache.WithFilter(nil)); return err },
		"depth -2":   func() error { _, err := cache.New(c, "/x", cache.WithMaxDepth(-2)); return err },
	} {
		if err := f(); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		}
	}
	cc, err := cache.New(c, testenv.Path(t, "/bad"))
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if err := cc.Start(nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("Start(nil): %v", err)
	}
	if err := cc.Close(); err != nil {
		t.Errorf("Close of a cache never started: %v", err)
	}
}

// A cache of a path that does not exist yet is empty, and fills once the
// path is made; the root deleted empties it, made again fills it again.
func TestCacheRootMadeLater(t *testing.T) { eachMode(t, testCacheRootMadeLater) }

func testCacheRootMadeLater(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	other := newClient(t, testenv.Shared().ConnectString())
	root := testenv.Path(t, "/later") + "/root"
	k := newConsumer(t)
	cc := startCache(t, ctx, c, root, k)
	if cc.Size() != 0 {
		t.Fatalf("%d nodes cached of a missing path", cc.Size())
	}
	mk(t, ctx, other, root+"/a")
	converged(t, ctx, other, cc, k, root)
	if err := other.Delete(ctx, root, framework.WithChildren()); err != nil {
		t.Fatal(err)
	}
	converged(t, ctx, other, cc, k, root)
	mk(t, ctx, other, root+"/b")
	converged(t, ctx, other, cc, k, root)
}

// A server without addWatch (before ZooKeeper 3.6: UNIMPLEMENTED, as the
// hook answers here) makes the cache fall back to one-shot watches: it
// loads, sets a data watch per node, and follows changes.
func TestCacheFallsBackToOneShot(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	other := newClient(t, testenv.Shared().ConnectString())
	root := testenv.Path(t, "/fallback")
	mk(t, ctx, other, root+"/a", root+"/b")
	cc, err := cache.New(c, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	var asked atomic.Int32
	cache.SetAddWatchHook(cc, func() error { asked.Add(1); return curator.ErrUnimplemented })
	k := newConsumer(t)
	cc.AddListener(k.on)
	if err := cc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	converged(t, ctx, other, cc, k, root)
	if n := asked.Load(); n != 1 {
		t.Errorf("addWatch asked %d times, want 1", n)
	}
	m, err := testenv.Shared().WatchesByPath()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{root, root + "/a", root + "/b"} {
		if len(m[testenv.Shared().Chroot()+p]) != 1 {
			t.Errorf("no one-shot watch on %s: %v", p, m[testenv.Shared().Chroot()+p])
		}
	}
	mk(t, ctx, other, root+"/c")
	if _, err := other.Set(ctx, root+"/a", []byte("a2")); err != nil {
		t.Fatal(err)
	}
	converged(t, ctx, other, cc, k, root)
}

// A cache of the root alone (a non-recursive persistent watch) and a
// whole-tree cache (a recursive one) on one path of one client, in either
// order: the server keeps one watch mode per session and path
// (ZOOKEEPER-4466), so the later one uses one-shot watches, and both
// load and follow their changes (the later one used to ask again
// forever, and its Start never returned).
func TestCachesOfBothModesOnOnePath(t *testing.T) {
	for _, order := range []string{"whole-first", "node-first"} {
		t.Run(order, func(t *testing.T) {
			ctx := testenv.Ctx(t, testenv.WaitLong)
			c := newClient(t, testenv.Shared().ConnectString())
			other := newClient(t, testenv.Shared().ConnectString())
			root := testenv.Path(t, "/bothmodes")
			mk(t, ctx, other, root+"/a/b")
			whole, err := cache.New(c, root)
			if err != nil {
				t.Fatal(err)
			}
			one, err := cache.New(c, root, cache.WithMaxDepth(0))
			if err != nil {
				t.Fatal(err)
			}
			caches := []*cache.Cache{whole, one}
			if order == "node-first" {
				caches = []*cache.Cache{one, whole}
			}
			for _, cc := range caches {
				t.Cleanup(func() { cc.Close() })
				if err := cc.Start(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := other.Set(ctx, root, []byte("v2")); err != nil {
				t.Fatal(err)
			}
			mk(t, ctx, other, root+"/a/b/c")
			testenv.Eventually(t, testenv.WaitLong, "both caches current", func() error {
				for _, cc := range caches {
					if n, ok := cc.Get(root); !ok || string(n.Data) != "v2" {
						return fmt.Errorf("root %+v %v", n, ok)
					}
				}
				if _, ok := whole.Get(root + "/a/b/c"); !ok {
					return fmt.Errorf("the whole-tree cache lacks the new grandchild")
				}
				if _, ok := one.Get(root + "/a"); ok {
					return fmt.Errorf("the root-only cache holds a child")
				}
				return nil
			})
		})
	}
}
