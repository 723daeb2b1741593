package nodes_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/nodes"
	"github.com/gocurator/curator/testing/zktest"
)

// startTTL makes and starts a PersistentTTLNode, closed at cleanup, and
// waits for its first create.
func startTTL(t *testing.T, ctx context.Context, c *framework.Client, path string, ttl time.Duration, data []byte, opts ...nodes.Option) *nodes.PersistentTTLNode {
	t.Helper()
	n, err := nodes.NewPersistentTTLNode(c, path, ttl, data, opts...)
	return started(t, ctx, n, err)
}

// exists reports whether path is there (failing on an error).
func exists(t *testing.T, c *framework.Client, path string) (bool, *framework.Stat) {
	t.Helper()
	ok, st, err := c.Exists(testenv.Ctx(t, testenv.WaitShort), path)
	if err != nil {
		t.Fatal(err)
	}
	return ok, st
}

// The node is made with its data; its child is touched at once (Curator:
// first after TTL/2), with the client's default data; SetData writes the
// node; Close deletes neither (they expire). (That both are TTL nodes
// shows only in how they go, TestPersistentTTLNodeExpires: a client's stat
// of a TTL or container node says ephemeralOwner 0, DataNode.copyStat.)
func TestPersistentTTLNodeBasic(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithDefaultData([]byte("me")))
	path := testenv.Path(t, "/ttl") + "/service"
	const ttl = 10 * time.Minute // the first touch after TTL/2 would come after 5 minutes
	n := startTTL(t, ctx, c, path, ttl, []byte("a"))
	if n.Path() != path || n.ChildPath() != path+"/touch" {
		t.Fatalf("Path %q, ChildPath %q", n.Path(), n.ChildPath())
	}
	data, st, err := c.Get(ctx, path)
	if err != nil || string(data) != "a" {
		t.Fatalf("node: %q, %+v, %v; want a", data, st, err)
	}
	testenv.Eventually(t, testenv.WaitShort, "the child touched at once", func() error {
		data, _, err := c.Get(ctx, n.ChildPath())
		if err != nil {
			return err
		}
		if string(data) != "me" {
			return fmt.Errorf("child %q", data)
		}
		return nil
	})
	if err := n.SetData(ctx, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get(ctx, path); err != nil || string(data) != "b" {
		t.Fatalf("after SetData: %q, %v", data, err)
	}
	if err := n.Start(); !errors.Is(err, curator.ErrBusy) {
		t.Errorf("Start twice: %v, want ErrBusy", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, n.ChildPath()} {
		if ok, _ := exists(t, c, p); !ok {
			t.Errorf("%s deleted by Close: it should expire", p)
		}
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close twice: %v", err)
	}
	if err := n.Start(); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	if err := n.SetData(ctx, nil); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("SetData after Close: %v, want ErrClosed", err)
	}
}

// Touches change the child only: a watcher of the node sees no event
// from them (Curator's testEventsOnParent). A forced delete of the child
// is repaired by the next touch (testForcedDeleteOfTouchNode).
func TestPersistentTTLNodeTouchesQuietlyAndRepairs(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	other := newClient(t, testenv.Shared().ConnectString())
	path := testenv.Path(t, "/ttl") + "/service"
	// Touched every 250 ms, 12 times per TTL: a touch late by seconds on a
	// loaded machine still keeps the child.
	n := startTTL(t, ctx, c, path, 3*time.Second, []byte("a"), nodes.WithTouchFactor(12), nodes.WithChildName("alive"))
	if n.ChildPath() != path+"/alive" {
		t.Fatalf("ChildPath %q", n.ChildPath())
	}
	_, st0, w, err := other.GetW(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var first int32 = -1
	testenv.Eventually(t, testenv.WaitLong, "the child touched three more times", func() error {
		_, st, err := other.Get(ctx, n.ChildPath())
		if err != nil {
			return err
		}
		if first < 0 {
			first = st.Version
		}
		if st.Version < first+3 {
			return fmt.Errorf("child version %d, from %d", st.Version, first)
		}
		return nil
	})
	select {
	case ev := <-w.C():
		t.Fatalf("the node's watcher got %+v from touches", ev)
	default:
	}
	if _, st, err := other.Get(ctx, path); err != nil || st.Mzxid != st0.Mzxid {
		t.Fatalf("the node changed under the touches: %+v, %v (was %+v)", st, err, st0)
	}

	if err := other.Delete(ctx, n.ChildPath()); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.WaitLong, "the child made again", func() error {
		for _, p := range []string{path, n.ChildPath()} {
			if ok, _ := exists(t, other, p); !ok {
				return fmt.Errorf("%s missing", p)
			}
		}
		return nil
	})
}

// WithoutParentCreation: the node waits for its parent (Curator's
// testRecreationOfParentNodeWithParentCreationOff), then is made and
// touched.
func TestPersistentTTLNodeWithoutParentCreation(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	parent := testenv.Path(t, "/ttl")
	n, err := nodes.NewPersistentTTLNode(c, parent+"/service", time.Minute, nil, nodes.WithoutParentCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the missing parent reported", func() bool { return errors.Is(n.Err(), zk.ErrNoNode) })
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := n.WaitForInitialCreate(short); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("WaitForInitialCreate with no parent: %v, want DeadlineExceeded with the NoNode problem", err)
	}
	if _, err := c.Create(ctx, parent, nil, framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitForInitialCreate(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the child touched", func() bool { ok, _ := exists(t, c, n.ChildPath()); return ok })
}

// Once the owner stops, the child expires, then the node, within the TTL
// and a few of the server's expiry checks: after Close, after the owner
// is cut off (its session expires, nothing is closed), and when it is cut
// off before its first touch, the node never having had a child (a
// container, as Curator 5.4's, would stay forever: CURATOR-545,
// apache/curator#1258).
func TestPersistentTTLNodeExpires(t *testing.T) {
	srv := zktest.StartServer(t, zktest.WithJVMProperty("znode.container.checkIntervalMs", "100"))
	const ttl = 500 * time.Millisecond
	gone := func(t *testing.T, c *framework.Client, n *nodes.PersistentTTLNode, path string) {
		t.Helper()
		testenv.WaitFor(t, testenv.WaitLong, "the child expired", func() bool { ok, _ := exists(t, c, n.ChildPath()); return !ok })
		testenv.WaitFor(t, testenv.WaitLong, "the node expired", func() bool { ok, _ := exists(t, c, path); return !ok })
	}
	touched := func(t *testing.T, c *framework.Client, n *nodes.PersistentTTLNode) {
		t.Helper()
		testenv.WaitFor(t, testenv.WaitShort, "the child touched", func() bool { ok, _ := exists(t, c, n.ChildPath()); return ok })
	}

	t.Run("closed", func(t *testing.T) {
		ctx := testenv.Ctx(t, testenv.WaitLong)
		c := newClient(t, srv.ConnectString())
		path := testenv.Path(t, "/ttl") + "/service"
		n := startTTL(t, ctx, c, path, ttl, nil)
		touched(t, c, n)
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		gone(t, c, n, path)
	})

	t.Run("cut off", func(t *testing.T) {
		ctx := testenv.Ctx(t, testenv.WaitLong)
		px := zktest.StartProxy(t, srv.Addr())
		c := newClient(t, px.Addr()+srv.Chroot())
		reader := newClient(t, srv.ConnectString())
		path := testenv.Path(t, "/ttl") + "/service"
		n := startTTL(t, ctx, c, path, ttl, nil)
		touched(t, reader, n)
		px.Refuse(true)
		px.Drop()
		gone(t, reader, n, path)
	})

	t.Run("cut off before the first touch", func(t *testing.T) {
		ctx := testenv.Ctx(t, testenv.WaitLong)
		px := zktest.StartProxy(t, srv.Addr())
		c := newClient(t, px.Addr()+srv.Chroot())
		reader := newClient(t, srv.ConnectString())
		parent := testenv.Path(t, "/ttl")
		if _, err := reader.Create(ctx, parent, nil, framework.WithParents()); err != nil {
			t.Fatal(err)
		}
		path := parent + "/service"
		n, err := nodes.NewPersistentTTLNode(c, path, ttl, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		held := px.HoldReply(zktest.OpCreateTTL) // the node's create: the server makes it, the owner never hears
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		if err := held.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		px.Refuse(true)
		held.Drop()
		if n.Path() != "" {
			t.Fatalf("the owner knows its node %q: it could have touched", n.Path())
		}
		if ok, st := exists(t, reader, path); ok && st.Cversion != 0 {
			t.Fatalf("the node had a child: %+v", st)
		}
		gone(t, reader, n, path)
	})
}

// A server without zookeeper.extendedTypesEnabled=true refuses TTL nodes:
// WaitForInitialCreate says so at once, with an error naming the
// setting, for a PersistentTTLNode and a PersistentNode in a TTL mode.
func TestPersistentTTLNodeRefusedByServer(t *testing.T) {
	srv := zktest.StartServer(t, zktest.WithJVMProperty("zookeeper.extendedTypesEnabled", "false"))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, srv.ConnectString())
	ttlNode, err := nodes.NewPersistentTTLNode(c, "/ttl/service", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := nodes.NewPersistentNode(c, "/ttl/plain", nil, nodes.WithMode(framework.ModePersistentTTL), nodes.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for what, n := range map[string]keeper{"PersistentTTLNode": ttlNode, "PersistentNode": plain} {
		t.Cleanup(func() { n.Close() })
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		err := n.WaitForInitialCreate(ctx)
		if !errors.Is(err, nodes.ErrTTLUnsupported) || !errors.Is(err, errors.ErrUnsupported) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: WaitForInitialCreate: %v, want ErrTTLUnsupported at once", what, err)
		}
		if err == nil || !strings.Contains(err.Error(), "zookeeper.extendedTypesEnabled=true") {
			t.Errorf("%s: %v does not name the setting", what, err)
		}
	}
	if ok, _ := exists(t, c, "/ttl/service"); ok {
		t.Error("a refused node is there")
	}
}

// Bad input is refused before any I/O with a typed error; so are options
// that belong to another constructor.
func TestPersistentTTLNodeBadInput(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString())
	mk := func(path string, ttl time.Duration, opts ...nodes.Option) func() error {
		return func() error { _, err := nodes.NewPersistentTTLNode(c, path, ttl, nil, opts...); return err }
	}
	for what, f := range map[string]func() error{
		"nil client": func() error { _, err := nodes.NewPersistentTTLNode(nil, "/x", time.Second, nil); return err },
		"/":          mk("/", time.Second),
		"relative":   mk("x", time.Second),
		"zero TTL":   mk("/x", 0),
		"negative":   mk("/x", -time.Second),
		"under 1ms":  mk("/x", time.Microsecond),
		"over max":   mk("/x", 0x100_00000000*time.Millisecond),
		"empty name": mk("/x", time.Second, nodes.WithChildName("")),
		"name a/b":   mk("/x", time.Second, nodes.WithChildName("a/b")),
		"name ..":    mk("/x", time.Second, nodes.WithChildName("..")),
		"factor 1":   mk("/x", time.Second, nodes.WithTouchFactor(1)),
		"WithMode":   mk("/x", time.Second, nodes.WithMode(framework.ModeEphemeral)),
		"WithTTL":    mk("/x", time.Second, nodes.WithTTL(time.Second)),
		"keep":       mk("/x", time.Second, nodes.WithKeepOnClose()),
		"protection": mk("/x", time.Second, nodes.WithProtection()),
		"child name on a PersistentNode": func() error {
			_, err := nodes.NewPersistentNode(c, "/x", nil, nodes.WithChildName("t"))
			return err
		},
		"factor on a PersistentNode": func() error {
			_, err := nodes.NewPersistentNode(c, "/x", nil, nodes.WithTouchFactor(3))
			return err
		},
	} {
		if err := f(); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		}
	}
	n, err := nodes.NewPersistentTTLNode(c, testenv.Path(t, "/ttl")+"/x", time.Second, nil, nil) // a nil option is skipped
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if err := n.WaitForInitialCreate(nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("WaitForInitialCreate(nil ctx): %v", err)
	}
	if err := n.WaitForInitialCreate(context.Background()); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("WaitForInitialCreate before Start: %v, want ErrNotHeld", err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close of a node never started: %v", err)
	}
	if len(n.Data()) != 0 || n.Path() != "" {
		t.Errorf("a node never started: data %q, path %q", n.Data(), n.Path())
	}
}
