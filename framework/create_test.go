package framework_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// Parents made by WithParentContainers are containers: the server removes
// them once their last child is gone (zktest checks containers every
// second); parents made by WithParents are persistent and stay.
func TestParentContainers(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("containers")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/box/inner/leaf", []byte("x"), framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/shelf/inner/leaf", []byte("x"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	// A node made with ModeContainer is one too. (The server shows
	// clients no mark of a container: reaping is the proof.)
	if _, err := c.Create(ctx, "/crate", nil, framework.WithMode(framework.ModeContainer)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/crate/item", nil); err != nil {
		t.Fatal(err)
	}

	for _, p := range []string{"/box/inner/leaf", "/shelf/inner/leaf", "/crate/item"} {
		if err := c.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, testenv.WaitLong, "the server reaps the empty containers", func() error {
		for _, p := range []string{"/box/inner", "/box", "/crate"} {
			if ok, _, err := c.Exists(ctx, p); err != nil || ok {
				return fmt.Errorf("%s still exists (%v)", p, err)
			}
		}
		return nil
	})
	for _, p := range []string{"/shelf", "/shelf/inner"} {
		if ok, _, err := c.Exists(ctx, p); err != nil || !ok {
			t.Fatalf("persistent parent %s reaped (%v)", p, err)
		}
	}
}

// TTL nodes are made (the zktest server enables extended types) and
// removed by the server once their TTL has passed; a TTL and a TTL mode go
// together or fail before any I/O.
func TestTTLNodes(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("ttl")))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	p, err := c.Create(ctx, "/ttl", []byte("x"), framework.WithMode(framework.ModePersistentTTL), framework.WithTTL(500*time.Millisecond))
	if err != nil {
		t.Fatalf("TTL create: %v", err)
	}
	seq, err := c.Create(ctx, "/ttl-seq-", nil, framework.WithMode(framework.ModePersistentSequentialTTL), framework.WithTTL(500*time.Millisecond))
	if err != nil || !isSeq(seq, "/ttl-seq-") {
		t.Fatalf("sequential TTL create = %q, %v", seq, err)
	}
	if ok, _, err := c.Exists(ctx, p); err != nil || !ok {
		t.Fatalf("%s: exists=%v, %v", p, ok, err)
	}
	testenv.Eventually(t, testenv.WaitLong, "the server removes expired TTL nodes", func() error {
		for _, n := range []string{p, seq} {
			if ok, _, err := c.Exists(ctx, n); err != nil || ok {
				return fmt.Errorf("%s still exists (%v)", n, err)
			}
		}
		return nil
	})

	for _, tc := range []struct {
		name string
		opts []framework.OpOption
	}{
		{"ttl mode without ttl", []framework.OpOption{framework.WithMode(framework.ModePersistentTTL)}},
		{"ttl without ttl mode", []framework.OpOption{framework.WithTTL(time.Second)}},
		{"negative ttl", []framework.OpOption{framework.WithMode(framework.ModePersistentTTL), framework.WithTTL(-time.Second)}},
		{"ttl on ephemeral", []framework.OpOption{framework.WithMode(framework.ModeEphemeral), framework.WithTTL(time.Second)}},
	} {
		if _, err := c.Create(ctx, "/bad", nil, tc.opts...); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
	}
	if ok, _, _ := c.Exists(ctx, "/bad"); ok {
		t.Error("an invalid create made a node")
	}
}

// Create's plain behaviour: data, modes, existing nodes, missing parents.
func TestCreateModes(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("create")), framework.WithDefaultData([]byte("me")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if string(c.DefaultData()) != "me" {
		t.Fatalf("DefaultData = %q", c.DefaultData())
	}
	if _, err := c.Create(ctx, "/p", []byte("d")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/p", nil); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("second create: %v, want ErrNodeExists", err)
	}
	if _, err := c.Create(ctx, "/missing/child", nil); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("create under a missing parent: %v, want ErrNoNode", err)
	}
	n, err := c.CreateNode(ctx, "/p/e", nil, framework.WithMode(framework.ModeEphemeral))
	if err != nil {
		t.Fatal(err)
	}
	if n.Session == nil || n.Session != c.Session() {
		t.Fatalf("ephemeral node's Session = %v, want the current one", n.Session)
	}
	if _, st, err := c.Get(ctx, "/p/e"); err != nil || st.EphemeralOwner != n.Session.ID() {
		t.Fatalf("ephemeral owner: %+v, %v", st, err)
	}
	n, err = c.CreateNode(ctx, "/p/s-", nil, framework.WithMode(framework.ModeEphemeralSequential))
	if err != nil || !isSeq(n.Path, "/p/s-") || n.Session == nil {
		t.Fatalf("ephemeral sequential = %+v, %v", n, err)
	}
	n, err = c.CreateNode(ctx, "/p/persistent", nil)
	if err != nil || n.Session != nil {
		t.Fatalf("persistent = %+v, %v; want no session", n, err)
	}
	if d, _, err := c.Get(ctx, "/p"); err != nil || string(d) != "d" {
		t.Fatalf("data = %q, %v", d, err)
	}
}

// WithParentStat: a protected create also reads its parent's stat, sent
// right behind the create on its connection, so the stat is read after the
// create and counts the new node; no read when the create needed its
// parents made (the stat would be older than the node); refused without
// WithProtection.
func TestCreateParentStat(t *testing.T) {
	px := startProxyFor(t)
	c := newClient(t, px.Addr(), framework.WithNamespace(testenv.Uniq("pstat")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	opts := []framework.OpOption{framework.WithMode(framework.ModeEphemeralSequential), framework.WithProtection(),
		framework.WithParentContainers(), framework.WithParentStat()}

	first, err := c.CreateNode(ctx, "/q/n-", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if first.Parent != nil {
		t.Errorf("a create that made its parent: Parent %+v, want nil", first.Parent)
	}
	px.ResetCounts()
	second, err := c.CreateNode(ctx, "/q/n-", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if second.Parent == nil || second.Parent.NumChildren != 2 {
		t.Fatalf("Parent %+v, want the parent's stat counting both nodes", second.Parent)
	}
	if n := px.Requests(zktest.OpExists); n != 1 {
		t.Errorf("%d exists requests, want 1 (the parent's stat)", n)
	}
	if _, err := c.CreateNode(ctx, "/q/m-", nil, framework.WithMode(framework.ModeEphemeralSequential), framework.WithParentStat()); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("WithParentStat without WithProtection: %v, want ErrInvalidArgument", err)
	}
}

// WithParentChildren: the read behind the create lists the parent's
// children, read after the create (ours among them), with the parent's
// stat; nothing when the create made its parent.
func TestCreateParentChildren(t *testing.T) {
	px := startProxyFor(t)
	c := newClient(t, px.Addr(), framework.WithNamespace(testenv.Uniq("pkids")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	opts := []framework.OpOption{framework.WithMode(framework.ModeEphemeralSequential), framework.WithProtection(),
		framework.WithParentContainers(), framework.WithParentChildren()}

	first, err := c.CreateNode(ctx, "/q/n-", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if first.Parent != nil || first.Children != nil {
		t.Errorf("a create that made its parent: Parent %+v, Children %q; want nil", first.Parent, first.Children)
	}
	px.ResetCounts()
	second, err := c.CreateNode(ctx, "/q/n-", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{framework.NodeName(first.Path), framework.NodeName(second.Path)}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(second.Children))
	if !slices.Equal(got, want) || second.Parent == nil || second.Parent.NumChildren != 2 {
		t.Fatalf("Children %q, Parent %+v; want %q and the parent's stat counting both", second.Children, second.Parent, want)
	}
	if n, e := px.Requests(zktest.OpGetChildren2), px.Requests(zktest.OpExists); n != 1 || e != 0 {
		t.Errorf("%d getChildren, %d exists; want 1 (the listing) and 0", n, e)
	}
}

// A create's reply may come back, and its caller take the answer of the
// read behind it, before go-zookeeper's Write of the create has returned
// (go-zookeeper registers a request before writing it; under load its
// sending goroutine can be descheduled right after the write). The read
// must have been sent behind the create all the same. Before the fix it
// was skipped then: the semaphore's internal lock lost its parent read,
// and TestAcquireNStartsOverWhenItsSetLosesANode failed in 2 of 35 runs of
// four test packages at once. The hooks hold the sending goroutine right
// after the create's write until the create has its answer.
func TestCreateReadsBehindAReplyFasterThanItsWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		read framework.OpOption
	}{{"stat", framework.WithParentStat()}, {"children", framework.WithParentChildren()}} {
		t.Run(tc.name, func(t *testing.T) {
			ns := testenv.Uniq("behind")
			c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
			ctx := testenv.Ctx(t, testenv.WaitShort)
			if _, err := c.Create(ctx, "/q", nil); err != nil {
				t.Fatal(err)
			}
			answered := make(chan struct{})
			var once sync.Once
			t.Cleanup(framework.SetParentResultHook(func() { once.Do(func() { close(answered) }) }))
			var held atomic.Bool
			t.Cleanup(framework.SetSockWriteHook(func(p []byte) {
				if isCreate(p) && bytes.Contains(p, []byte(ns+"/q/")) && held.CompareAndSwap(false, true) {
					select {
					case <-answered:
					case <-time.After(testenv.WaitShort):
						t.Error("the create was never answered while its write was held")
					}
				}
			}))
			n, err := c.CreateNode(ctx, "/q/n-", nil, framework.WithMode(framework.ModeEphemeralSequential),
				framework.WithProtection(), tc.read)
			if err != nil {
				t.Fatal(err)
			}
			if !held.Load() {
				t.Fatal("the hook never held the create's write")
			}
			if n.Parent == nil || n.Parent.NumChildren != 1 {
				t.Errorf("Parent %+v, want the parent's stat counting our node", n.Parent)
			}
			if tc.name == "children" && (len(n.Children) != 1 || n.Children[0] != framework.NodeName(n.Path)) {
				t.Errorf("Children %q, want our node alone", n.Children)
			}
		})
	}
}

// isCreate reports whether a request packet (length, xid, op code, body)
// is a create (ZooDefs.OpCode: create, create2, createContainer, createTTL).
func isCreate(p []byte) bool {
	if len(p) < 12 {
		return false
	}
	return slices.Contains([]int32{1, 15, 19, 21}, int32(binary.BigEndian.Uint32(p[8:12])))
}

// A parent that goes after the parents were made and before the create
// (the server reaps an emptied container at any moment, even one just made
// again; a user may delete one) is made again, as is an ancestor gone while
// they are made: the create does not fail with NoNode. CI met it: an
// election's path, emptied by its session's expiry, reaped between its new
// session's making of the parents and its create (TestOwnerCheckAfterExpiry).
// A parent deleted at every round ends the create with NoNode, the parents
// made and nothing else.
func TestCreateRemakesAParentThatWent(t *testing.T) {
	later := testenv.RestoreLater(t) // before the clients: restored once they are closed
	ns := testenv.Uniq("remake")
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	admin := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	root := "/" + ns
	var mu sync.Mutex
	var seen []string
	deleteOnce := map[string]string{ // a create of key: delete the value first
		root + "/a/b":      root + "/a",   // an ancestor gone while the parents are made
		root + "/a/b/leaf": root + "/a/b", // the parent gone before the create
	}
	always := ""
	later(framework.SetParentsHook(func(full string) {
		if !strings.HasPrefix(full, root+"/") { // the namespace's making, say
			return
		}
		mu.Lock()
		seen = append(seen, full)
		victim, ok := deleteOnce[full]
		delete(deleteOnce, full)
		if full == always+"/leaf" {
			victim, ok = always, true
		}
		mu.Unlock()
		if ok {
			if err := admin.Delete(ctx, victim, framework.WithChildren()); err != nil {
				t.Errorf("delete %s: %v", victim, err)
			}
		}
	}))
	if _, err := c.Create(ctx, "/a/b/leaf", []byte("x"), framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	want := []string{root + "/a", root + "/a/b", root + "/a", root + "/a/b", root + "/a/b/leaf", root + "/a/b", root + "/a/b/leaf"}
	if !slices.Equal(seen, want) || len(deleteOnce) != 0 {
		t.Errorf("creates %v, want %v (deletions left %v)", seen, want, deleteOnce)
	}
	always, seen = root+"/c", nil
	mu.Unlock()
	if data, _, err := c.Get(ctx, "/a/b/leaf"); err != nil || string(data) != "x" {
		t.Fatalf("the leaf: %q, %v", data, err)
	}

	_, err := c.Create(ctx, "/c/leaf", nil, framework.WithParentContainers())
	if !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("a parent deleted at every round: %v, want NoNode", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := slices.Index(seen, root+"/c/leaf"); n < 0 || len(seen) > 2*8 {
		t.Fatalf("creates %v: want a bounded number of rounds", seen)
	}
	if ok, _, err := admin.Exists(ctx, root+"/c"); err != nil || ok {
		t.Fatalf("/c: %v, %v; want gone (the hook deleted it last)", ok, err)
	}
}
