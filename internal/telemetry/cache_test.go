package telemetry_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/telemetry/telemetrytest"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/recipes/nodes"
	"github.com/gocurator/curator/testing/zktest"
)

const (
	cacheSize     = telemetry.MetricCacheSize
	cacheEvents   = telemetry.MetricCacheEvents
	cacheRebuilds = telemetry.MetricCacheRebuilds
	recreations   = telemetry.MetricNodeRecreations
)

var eventType = telemetry.KeyCacheEvent.String

// eventCounter counts a cache's events by type, as its listener saw them:
// what the metric must agree with.
type eventCounter struct {
	mu sync.Mutex
	n  map[cache.EventType]int64
}

func (k *eventCounter) on(ev cache.Event) {
	k.mu.Lock()
	k.n[ev.Type]++
	k.mu.Unlock()
}

func (k *eventCounter) get(t cache.EventType) int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n[t]
}

// A cache's size follows its nodes, its events are counted by type as
// its listener gets them, a session loss is one rebuild, and Close takes
// its nodes out of the size. With WithPathAttributes its points carry its
// root.
func TestCacheMetrics(t *testing.T) {
	rig := telemetrytest.New(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := client(t, rig, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second), framework.WithPathAttributes())
	reader := testenv.Client(t, srv.ConnectString())
	root := testenv.Path(t, "/telemetry-cache")
	for _, p := range []string{root + "/a", root + "/b"} {
		if _, err := reader.Create(ctx, p, []byte("x"), framework.WithParents()); err != nil {
			t.Fatal(err)
		}
	}
	cc, err := cache.New(c, root)
	if err != nil {
		t.Fatal(err)
	}
	k := &eventCounter{n: map[cache.EventType]int64{}}
	cc.AddListener(k.on)
	if err := cc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	at := telemetry.KeyPath.String(root)
	cached := recipe(telemetry.RecipeCache)
	rig.WaitSum(t, testenv.WaitShort, 3, cacheSize, cached, at) // root, a, b
	testenv.WaitFor(t, testenv.WaitShort, "Initialized", func() bool { return k.get(cache.EventInitialized) == 1 })

	if _, err := reader.Create(ctx, root+"/c", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Set(ctx, root+"/a", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if err := reader.Delete(ctx, root+"/b"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "the changes delivered", func() bool {
		return k.get(cache.EventCreated) == 4 && k.get(cache.EventChanged) >= 1 && k.get(cache.EventDeleted) == 1
	})
	rig.WaitSum(t, testenv.WaitShort, 3, cacheSize, cached, at) // root, a, c

	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "EventRebuilt", func() bool { return k.get(cache.EventRebuilt) == 1 })
	if n := rig.Sum(t, cacheRebuilds, cached, at); n < 1 {
		t.Fatalf("rebuilds %d after a session loss, want at least 1: %v", n, rig.Points(t, cacheRebuilds))
	}
	for typ, name := range map[cache.EventType]string{cache.EventCreated: "created", cache.EventChanged: "changed",
		cache.EventDeleted: "deleted", cache.EventInitialized: "initialized", cache.EventRebuilt: "rebuilt"} {
		if got, want := rig.Sum(t, cacheEvents, cached, at, eventType(name)), k.get(typ); got != want {
			t.Errorf("%s events: metric %d, listener %d: %v", name, got, want, rig.Points(t, cacheEvents))
		}
	}
	if n := rig.Sum(t, cacheSize, cached, at); n != 3 {
		t.Errorf("size after the rebuild: %d, want 3", n)
	}

	if err := cc.Close(); err != nil {
		t.Fatal(err)
	}
	if n := rig.Sum(t, cacheSize, cached); n != 0 {
		t.Errorf("size after Close: %d, want 0: %v", n, rig.Points(t, cacheSize))
	}
}

// Two caches of one client add up, without path attributes; a cache
// never started counts nothing.
func TestCacheSizeAddsUp(t *testing.T) {
	rig := telemetrytest.New(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := client(t, rig, testenv.Shared().ConnectString())
	root := testenv.Path(t, "/telemetry-cache")
	if _, err := c.Create(ctx, root+"/a/b", nil, framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	whole, err := cache.New(c, root)
	if err != nil {
		t.Fatal(err)
	}
	one, err := cache.New(c, root, cache.WithMaxDepth(0))
	if err != nil {
		t.Fatal(err)
	}
	idle, err := cache.New(c, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range []*cache.Cache{whole, one} {
		if err := cc.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rig.WaitSum(t, testenv.WaitShort, 4, cacheSize, recipe(telemetry.RecipeCache)) // 3 + 1
	if rig.HasKey(t, cacheSize, telemetry.KeyPath) {
		t.Error("curator.path without WithPathAttributes")
	}
	for _, cc := range []*cache.Cache{whole, one, idle} {
		if err := cc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := rig.Sum(t, cacheSize); n != 0 {
		t.Errorf("size after Close: %d", n)
	}
}

// A PersistentNode counts a re-creation each time its node is made again:
// after a delete by someone else, after its session expired; its first
// create is none.
func TestPersistentNodeRecreations(t *testing.T) {
	rig := telemetrytest.New(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := client(t, rig, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	other := testenv.Client(t, srv.ConnectString())
	base := path(t) + "/member"
	n := persistentNode(t, ctx, c, base)
	node := recipe(telemetry.RecipePersistentNode)
	if got := rig.Sum(t, recreations, node); got != 0 {
		t.Fatalf("re-creations after the first create: %d", got)
	}
	first := stat(t, other, n.Path()).Czxid
	if err := other.Delete(ctx, n.Path()); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitLong, 1, recreations, node)
	remade := stat(t, other, n.Path())
	if remade.Czxid == first {
		t.Fatal("the node was not made again")
	}

	old := c.Session()
	if err := zktest.ExpireSession(ctx, px, srv, old.ID()); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitLong, 2, recreations, node)
	if st := stat(t, other, n.Path()); st.EphemeralOwner == old.ID() || st.EphemeralOwner == 0 {
		t.Errorf("after the expiry the node's owner is 0x%x (old session 0x%x)", st.EphemeralOwner, old.ID())
	}
}

// persistentNode starts an ephemeral PersistentNode at path, closed at
// cleanup, and waits for its first create.
func persistentNode(t *testing.T, ctx context.Context, c *framework.Client, path string) *nodes.PersistentNode {
	t.Helper()
	n, err := nodes.NewPersistentNode(c, path, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitForInitialCreate(ctx); err != nil {
		t.Fatal(err)
	}
	return n
}

func stat(t *testing.T, c *framework.Client, p string) *framework.Stat {
	t.Helper()
	ok, st, err := c.Exists(context.Background(), p)
	if err != nil || !ok {
		t.Fatalf("exists %s: %v %v", p, ok, err)
	}
	return st
}
