package interop_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/cache"
)

// replay applies a Go cache's events to a map of path -> "hex:mzxid", as
// a consumer would; it must end equal to the cache and to the tree.
type replay struct {
	mu     sync.Mutex
	m      map[string]string
	inited int
}

func (r *replay) on(ev cache.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case cache.EventInitialized:
		r.inited++
	case cache.EventCreated, cache.EventChanged:
		r.m[ev.Path] = nodeLine(*ev.New, true)
	case cache.EventDeleted:
		delete(r.m, ev.Path)
	}
}

func (r *replay) read() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return joinMap(r.m)
}

// startCache starts a gocurator cache of p, closed at clean-up, with its
// events replayed.
func startCache(t *testing.T, ctx context.Context, c *framework.Client, p string) (*cache.Cache, *replay) {
	t.Helper()
	cc, err := cache.New(c, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	r := &replay{m: map[string]string{}}
	cc.AddListener(r.on)
	if err := cc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return cc, r
}

// nodeLine is how the Java peer prints a node: hex data, with ":mzxid"
// if withZxid.
func nodeLine(n cache.Node, withZxid bool) string {
	s := hex.EncodeToString(n.Data)
	if withZxid {
		s += fmt.Sprintf(":%d", n.Stat.Mzxid)
	}
	return s
}

// joinMap prints m as the Java peer does: path=value, sorted by path.
func joinMap(m map[string]string) string {
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	slices.Sort(paths) // by path, as Java's TreeMap and ChildData.compareTo
	parts := make([]string, len(paths))
	for i, p := range paths {
		parts[i] = p + "=" + m[p]
	}
	return strings.Join(parts, ",")
}

// snapshot prints a Go cache's contents as the Java peer does.
func snapshot(cc *cache.Cache, withZxid bool) string {
	m := map[string]string{}
	for p, n := range cc.Snapshot() {
		m[p] = nodeLine(n, withZxid)
	}
	return joinMap(m)
}

// A tree that Curator writes (creates with data, nested, with parents;
// sets; deletes of subtrees) is seen exactly by a gocurator cache started
// before it existed: path, data and mzxid as Curator itself reads them
// back, and the cache's events replayed onto an empty map say the same.
func testCacheCuratorTree(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	p := e.path(t)
	cc, r := startCache(t, ctx, c, p) // the path does not exist yet
	for _, cmd := range []string{
		"node-create " + p + "/config/db/url jdbc:postgresql://db:5432/app",
		"node-create " + p + "/config/db/user alice",
		"node-create " + p + "/config/flags/beta on",
		"node-create " + p + "/services/a/instance-1 10.0.0.1:8080",
		"node-create " + p + "/services/a/instance-2 10.0.0.2:8080",
		"node-set " + p + "/config/db/user bob",
		"node-set " + p + " root-data",
		"node-delete " + p + "/services/a",
		"node-create " + p + "/services/b/instance-3 10.0.0.3:8080",
		"node-delete " + p + "/config/flags/beta",
		"node-create " + p + "/config/flags/beta off",
	} {
		java.must(cmd)
	}
	var curator string
	eventually(t, "the Go cache equal to the tree as Curator reads it",
		func() bool {
			curator = java.must("tree-read " + p)
			return snapshot(cc, true) == curator && r.read() == curator
		},
		func() string {
			return fmt.Sprintf("Curator reads %s; the Go cache holds %s; its events say %s", curator, snapshot(cc, true), r.read())
		})
	for path, want := range map[string]string{
		p:                                "root-data",
		p + "/config/db/url":             "jdbc:postgresql://db:5432/app",
		p + "/config/db/user":            "bob",
		p + "/config/flags/beta":         "off",
		p + "/services/b/instance-3":     "10.0.0.3:8080",
		p + "/services/a":                "",
		p + "/services/a/instance-1":     "",
		p + "/services/b/instance-3/any": "",
	} {
		n, ok := cc.Get(path)
		switch {
		case want == "" && ok:
			t.Errorf("%s cached, deleted by Curator", path)
		case want != "" && string(n.Data) != want:
			t.Errorf("%s: %q, Curator wrote %q", path, n.Data, want)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inited != 1 {
		t.Errorf("%d Initialized events, want 1", r.inited)
	}
}

// goChurn makes n random creates, sets and deletes at depths 1 to 3 below
// root over the names a, b, c, as the Java peer's churn does.
func goChurn(ctx context.Context, c *framework.Client, root string, n int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 1))
	names := []string{"a", "b", "c"}
	for i := range n {
		p := root
		for range 1 + r.IntN(3) {
			p += "/" + names[r.IntN(len(names))]
		}
		data := []byte(fmt.Sprintf("go-%d", i))
		var err error
		switch r.IntN(3) {
		case 0:
			_, err = c.Create(ctx, p, data, framework.WithParents())
		case 1:
			_, err = c.Set(ctx, p, data)
		default:
			err = c.Delete(ctx, p)
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			return fmt.Errorf("churn %s: %w", p, err)
		}
	}
	return nil
}

// A gocurator cache and Curator's CuratorCache on the same path, over the
// same churn (a Curator client and a gocurator client changing the tree
// at once), end in the same state, path for path and byte for byte: the
// tree's. Each said initialized once.
func testCacheSameAsCuratorCache(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 2)
	javaCache, javaChurn := peers[0], peers[1]
	c := newClient(t, e)
	writer := newClient(t, e)
	p := e.path(t)
	if _, err := writer.Create(ctx, p+"/a", []byte("start"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	cc, r := startCache(t, ctx, c, p)
	javaCache.must("cache-start " + p)

	javaDone := javaChurn.send(fmt.Sprintf("churn %s 600 7", p))
	goDone := async(func() error { return goChurn(ctx, writer, p, 600, 11) })
	javaChurn.ok(javaDone, "churn")
	done(t, goDone, "the Go churn")

	var tree, curatorCache string
	eventually(t, "both caches equal to the tree",
		func() bool {
			tree = stripZxids(javaCache.must("tree-read " + p))
			curatorCache = javaCache.must("cache-read " + p)
			return curatorCache == tree && snapshot(cc, false) == tree && stripZxids(r.read()) == tree
		},
		func() string {
			return fmt.Sprintf("the tree %s; CuratorCache %s; the Go cache %s", tree, curatorCache, snapshot(cc, false))
		})
	if n := javaCache.must("cache-initialized " + p); n != "1" {
		t.Errorf("CuratorCache said initialized %s times", n)
	}
	r.mu.Lock()
	inited := r.inited
	r.mu.Unlock()
	if inited != 1 {
		t.Errorf("the Go cache said initialized %d times", inited)
	}
	javaCache.must("cache-close " + p)
	t.Logf("%d nodes at the end", strings.Count(tree, "=")) // how much the comparison covered
}

// stripZxids drops the ":mzxid" of each path=hex:mzxid.
func stripZxids(s string) string {
	if s == "" {
		return s
	}
	parts := strings.Split(s, ",")
	for i, part := range parts {
		if j := strings.LastIndex(part, ":"); j > strings.Index(part, "=") {
			parts[i] = part[:j]
		}
	}
	return strings.Join(parts, ",")
}
