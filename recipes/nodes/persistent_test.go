package nodes_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/nodes"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.Client(t, connect, append([]framework.Option{framework.WithRetryPolicy(testenv.Patient{})}, opts...)...)
}

// keeper is what PersistentNode and PersistentTTLNode share.
type keeper interface {
	Start() error
	WaitForInitialCreate(context.Context) error
	Close() error
}

// started takes what a constructor returned, closes it at cleanup, starts
// it and waits for its first create.
func started[N keeper](t *testing.T, ctx context.Context, n N, err error) N {
	t.Helper()
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

// start makes and starts a PersistentNode, closed at cleanup, and waits
// for its first create.
func start(t *testing.T, ctx context.Context, c *framework.Client, path string, data []byte, opts ...nodes.Option) *nodes.PersistentNode {
	t.Helper()
	n, err := nodes.NewPersistentNode(c, path, data, opts...)
	return started(t, ctx, n, err)
}

// nodeIs waits until path holds data and (ephemeral) belongs to c's
// current session, and the parent has exactly one child.
func nodeIs(t *testing.T, c, reader *framework.Client, n *nodes.PersistentNode, data []byte) {
	t.Helper()
	testenv.Eventually(t, testenv.WaitLong, "the node there, ours, with its data", func() error {
		path := n.Path()
		got, st, err := reader.Get(context.Background(), path)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("data %q, want %q", got, data)
		}
		if s := c.Session(); s == nil || st.EphemeralOwner != s.ID() {
			return fmt.Errorf("owner 0x%x, not the current session", st.EphemeralOwner)
		}
		kids, _, err := reader.Children(context.Background(), framework.ParentPath(path))
		if err != nil {
			return err
		}
		if len(kids) != 1 {
			return fmt.Errorf("children %q, want one", kids)
		}
		return nil
	})
}

// A PersistentNode makes its node, writes new data into it, and deletes
// it at Close, leaving no watch; every call after Close says ErrClosed.
func TestPersistentNodeBasic(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	path := testenv.Path(t, "/pn") + "/member"
	n := start(t, ctx, c, path, []byte("a"))
	if n.Path() != path {
		t.Fatalf("Path %q, want %q", n.Path(), path)
	}
	nodeIs(t, c, c, n, []byte("a"))
	if err := n.SetData(ctx, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.Get(ctx, path); err != nil || string(got) != "b" {
		t.Fatalf("after SetData returned: %q, %v; want b", got, err)
	}
	if string(n.Data()) != "b" {
		t.Errorf("Data %q, want b", n.Data())
	}
	if err := n.Start(); !errors.Is(err, curator.ErrBusy) {
		t.Errorf("Start twice: %v, want ErrBusy", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := c.Exists(ctx, path); err != nil || ok {
		t.Fatalf("after Close: exists %v, %v", ok, err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "no watch left", func() bool { a, w := c.WatchStats(); return a == 0 && w == 0 })
	if err := n.Close(); err != nil {
		t.Errorf("Close twice: %v", err)
	}
	if err := n.SetData(ctx, nil); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("SetData after Close: %v, want ErrClosed", err)
	}
	if err := n.Start(); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	if err := n.WaitForInitialCreate(ctx); err != nil {
		t.Errorf("WaitForInitialCreate after a create and Close: %v, want nil (it was made)", err)
	}
}

// Deleted by someone else, the node is made again at once, under its
// exact name (a sequential one keeps its sequence and protection, as
// Curator since CURATOR-483), with the latest data (CURATOR-241).
func TestPersistentNodeMadeAgainAfterADelete(t *testing.T) {
	for _, mode := range []framework.CreateMode{framework.ModeEphemeral, framework.ModeEphemeralSequential, framework.ModePersistent} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			ctx := testenv.Ctx(t, testenv.WaitLong)
			c := newClient(t, testenv.Shared().ConnectString())
			other := newClient(t, testenv.Shared().ConnectString())
			base := testenv.Path(t, "/pn") + "/member-"
			n := start(t, ctx, c, base, []byte("a"), nodes.WithMode(mode))
			first := n.Path()
			if mode.Sequential() && !framework.IsProtected(framework.NodeName(first)) {
				t.Fatalf("a sequential node %q is not protected", first)
			}
			if err := n.SetData(ctx, []byte("latest")); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				if err := other.Delete(ctx, first); err != nil {
					t.Fatal(err)
				}
				testenv.Eventually(t, testenv.WaitLong, "the node made again", func() error {
					got, _, err := other.Get(ctx, first)
					if err != nil {
						return err
					}
					if string(got) != "latest" {
						return fmt.Errorf("data %q", got)
					}
					return nil
				})
				if n.Path() != first {
					t.Fatalf("made again as %q, want %q", n.Path(), first)
				}
				kids, _, err := other.Children(ctx, framework.ParentPath(first))
				if err != nil || len(kids) != 1 {
					t.Fatalf("children %q, %v; want one", kids, err)
				}
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			if ok, _, _ := other.Exists(ctx, first); ok {
				t.Error("the node is still there after Close")
			}
		})
	}
}

// After its session expires, the node is back in the new session within
// a session timeout, with the data set while the client was cut off, and
// never doubled.
func TestPersistentNodeAfterSessionExpiry(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	other := newClient(t, srv.ConnectString())
	base := testenv.Path(t, "/pn") + "/member-"
	n := start(t, ctx, c, base, []byte("a"), nodes.WithMode(framework.ModeEphemeralSequential))
	first, old := n.Path(), c.Session()
	setDone := make(chan error, 1)
	if err := zktest.ExpireSession(ctx, px, srv, old.ID()); err != nil {
		t.Fatal(err)
	}
	go func() { setDone <- n.SetData(ctx, []byte("while cut off")) }()
	testenv.WaitFor(t, testenv.WaitLong, "a new session", func() bool { s := c.Session(); return s != nil && s != old && !s.Lost() })
	if err := testenv.Recv(t, setDone, testenv.WaitLong, "SetData"); err != nil {
		t.Fatal(err)
	}
	nodeIs(t, c, other, n, []byte("while cut off"))
	if n.Path() != first {
		t.Errorf("made again as %q, want %q", n.Path(), first)
	}
}

// A create whose reply is lost is found again (protected), never made
// twice.
func TestPersistentNodeLostCreateReply(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(4*time.Second))
	other := newClient(t, srv.ConnectString())
	base := testenv.Path(t, "/pn") + "/member-"
	if _, err := other.Create(ctx, framework.ParentPath(base), nil); err != nil {
		t.Fatal(err)
	}
	n, err := nodes.NewPersistentNode(c, base, []byte("a"), nodes.WithMode(framework.ModeEphemeralSequential))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	held := px.HoldReply(zktest.OpCreate)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	held.Drop()
	px.Drop() // the connection goes with the reply: the create is retried
	if err := n.WaitForInitialCreate(ctx); err != nil {
		t.Fatal(err)
	}
	nodeIs(t, c, other, n, []byte("a"))
}

// A node at our exact path owned by a session that was never ours (two
// members of one group with one id) is waited on, not adopted, and
// reported; ours is made once it goes.
func TestPersistentNodeWaitsForAnotherOwner(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	other := newClient(t, testenv.Shared().ConnectString())
	path := testenv.Path(t, "/pn") + "/member"
	if _, err := other.Create(ctx, path, []byte("theirs"), framework.WithMode(framework.ModeEphemeral), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	n, err := nodes.NewPersistentNode(c, path, []byte("ours"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the other owner reported", func() bool { return errors.Is(n.Err(), curator.ErrLocked) })
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := n.WaitForInitialCreate(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForInitialCreate while another owns the path: %v, want DeadlineExceeded", err)
	}
	if got, _, _ := other.Get(ctx, path); string(got) != "theirs" {
		t.Fatalf("their node's data %q: ours wrote over it", got)
	}
	// Closed while it waits, a PersistentNode leaves their node alone.
	waiting, err := nodes.NewPersistentNode(c, path, []byte("ours too"))
	if err != nil {
		t.Fatal(err)
	}
	if err := waiting.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the other owner reported", func() bool { return errors.Is(waiting.Err(), curator.ErrLocked) })
	if err := waiting.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _, err := other.Get(ctx, path); err != nil || string(got) != "theirs" {
		t.Fatalf("their node after a waiting PersistentNode's Close: %q, %v", got, err)
	}
	if err := other.Delete(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitForInitialCreate(ctx); err != nil {
		t.Fatal(err)
	}
	nodeIs(t, c, other, n, []byte("ours"))
	if n.Err() != nil {
		t.Errorf("Err %v once ours is there", n.Err())
	}
}

// Close while the first create's reply is held: the node it makes is
// deleted, not left behind (CURATOR-297); a persistent node kept with
// WithKeepOnClose stays.
func TestPersistentNodeCloseDuringCreate(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot())
	other := newClient(t, srv.ConnectString())
	parent := testenv.Path(t, "/pn")
	if _, err := other.Create(ctx, parent, nil); err != nil {
		t.Fatal(err)
	}
	n, err := nodes.NewPersistentNode(c, parent+"/p", []byte("a"), nodes.WithMode(framework.ModePersistent))
	if err != nil {
		t.Fatal(err)
	}
	held := px.HoldReply(zktest.OpCreate)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	testenv.NotYet(t, closed, "Close while the create is in flight")
	held.Release()
	if err := testenv.Recv(t, closed, testenv.WaitLong, "Close"); err != nil {
		t.Fatal(err)
	}
	if kids, _, err := other.Children(ctx, parent); err != nil || len(kids) != 0 {
		t.Fatalf("after Close: children %q, %v; want none", kids, err)
	}

	kept := start(t, ctx, c, parent+"/kept", nil, nodes.WithMode(framework.ModePersistent), nodes.WithKeepOnClose())
	if err := kept.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := other.Exists(ctx, parent+"/kept"); err != nil || !ok {
		t.Fatalf("WithKeepOnClose: exists %v, %v", ok, err)
	}
}

// Bad input is refused before any I/O with a typed error.
func TestPersistentNodeBadInput(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString())
	for what, f := range map[string]func() error{
		"nil client":    func() error { _, err := nodes.NewPersistentNode(nil, "/x", nil); return err },
		"/":             func() error { _, err := nodes.NewPersistentNode(c, "/", nil); return err },
		"relative path": func() error { _, err := nodes.NewPersistentNode(c, "x", nil); return err },
		"/zookeeper":    func() error { _, err := nodes.NewPersistentNode(c, "/zookeeper/x", nil); return err },
		"bad mode":      func() error { _, err := nodes.NewPersistentNode(c, "/x", nil, nodes.WithMode(99)); return err },
		"TTL, no mode":  func() error { _, err := nodes.NewPersistentNode(c, "/x", nil, nodes.WithTTL(time.Second)); return err },
		"mode, no TTL": func() error {
			_, err := nodes.NewPersistentNode(c, "/x", nil, nodes.WithMode(framework.ModePersistentTTL))
			return err
		},
		"zero TTL": func() error { _, err := nodes.NewPersistentNode(c, "/x", nil, nodes.WithTTL(0)); return err },
	} {
		if err := f(); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		}
	}
	n, err := nodes.NewPersistentNode(c, testenv.Path(t, "/pn")+"/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if err := n.SetData(nil, nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("SetData(nil ctx): %v", err)
	}
	if err := n.WaitForInitialCreate(context.Background()); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("WaitForInitialCreate before Start: %v, want ErrNotHeld", err)
	}
	if err := n.SetData(context.Background(), []byte("before")); err != nil {
		t.Errorf("SetData before Start: %v, want nil (kept for the create)", err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close of a node never started: %v", err)
	}
	if ok, _, err := c.Exists(context.Background(), n.Path()); n.Path() != "" || (err == nil && ok) {
		t.Errorf("a node never started made %q", n.Path())
	}
}

// A TTL node is made with its TTL (zktest's servers enable extended types
// and check for expired nodes often): kept at Close (WithKeepOnClose), it
// goes by itself once its TTL has passed with no change.
func TestPersistentNodeTTL(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	path := testenv.Path(t, "/pn") + "/ttl"
	n := start(t, ctx, c, path, []byte("t"), nodes.WithMode(framework.ModePersistentTTL), nodes.WithTTL(300*time.Millisecond), nodes.WithKeepOnClose())
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "the TTL node gone by itself", func() bool {
		ok, _, err := c.Exists(ctx, path)
		return err == nil && !ok
	})
}

// Through a server restart (a stop longer than the client's patience for
// one call), the node stays or comes back, ours, never doubled, with the
// data set while the server was down.
func TestPersistentNodeServerRestart(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := zktest.StartServer(t)
	c := newClient(t, srv.ConnectString(), framework.WithSessionTimeout(4*time.Second))
	base := "/pn/member-"
	n := start(t, ctx, c, base, []byte("a"), nodes.WithMode(framework.ModeEphemeralSequential))
	first := n.Path()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	setDone := make(chan error, 1)
	go func() { setDone <- n.SetData(ctx, []byte("set while down")) }()
	testenv.WaitFor(t, testenv.WaitShort, "the client disconnected", func() bool { return !c.Connected() })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, setDone, testenv.WaitLong, "SetData"); err != nil {
		t.Fatal(err)
	}
	reader := newClient(t, srv.ConnectString())
	nodeIs(t, c, reader, n, []byte("set while down"))
	if n.Path() != first {
		t.Errorf("made again as %q, want %q", n.Path(), first)
	}
}

// The client declares its session lost before the server expires it (a
// partition): the new session finds the node of the old one still there,
// ours, deletes it and makes ours again: one node, owned by the current
// session (Curator adopts the dying session's node, and loses it when the
// server expires that session).
func TestPersistentNodeReplacesItsOldSessionsNode(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	// Declared lost 1 s after its last answered request was sent; the
	// server keeps the session 10 s.
	c := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(10*time.Second), framework.WithSessionExpirationPercent(10))
	other := newClient(t, srv.ConnectString())
	n := start(t, ctx, c, testenv.Path(t, "/pn")+"/member", []byte("a"))
	old := c.Session()
	px.Refuse(true)
	px.Drop()
	testenv.WaitFor(t, testenv.WaitShort, "the session declared lost", old.Lost)
	if ok, st, err := other.Exists(ctx, n.Path()); err != nil || !ok || st.EphemeralOwner != old.ID() {
		t.Fatalf("the old session's node: %v, %+v, %v; want it still there (the premise)", ok, st, err)
	}
	px.Refuse(false)
	testenv.WaitFor(t, testenv.WaitLong, "a new session", func() bool { s := c.Session(); return s != old && !s.Lost() })
	nodeIs(t, c, other, n, []byte("a"))
}

// Listeners hear of every make: the first, and each after a delete by
// someone else, in the order they were added; a removed one no more.
func TestPersistentNodeListener(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	other := newClient(t, testenv.Shared().ConnectString())
	base := testenv.Path(t, "/pn") + "/member-"
	n, err := nodes.NewPersistentNode(c, base, []byte("a"), nodes.WithMode(framework.ModeEphemeralSequential))
	if err != nil {
		t.Fatal(err)
	}
	first, second := make(chan string, 10), make(chan string, 10)
	remove := n.AddListener(func(p string) { first <- p })
	n = started(t, ctx, n, nil)
	path := n.Path()
	if got := testenv.Recv(t, first, testenv.WaitLong, "the first make"); got != path {
		t.Fatalf("told %q, the node is %q", got, path)
	}
	if err := other.Delete(ctx, path); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Recv(t, first, testenv.WaitLong, "the make after a delete"); got != path {
		t.Fatalf("told %q after the delete, the node is %q", got, path)
	}
	remove()
	n.AddListener(func(p string) { second <- p })
	if err := other.Delete(ctx, path); err != nil {
		t.Fatal(err)
	}
	// Called in the order added: once the later one is told, the removed
	// one would have been.
	if got := testenv.Recv(t, second, testenv.WaitLong, "the make after the second delete"); got != path {
		t.Fatalf("told %q, the node is %q", got, path)
	}
	select {
	case p := <-first:
		t.Fatalf("a removed listener told of %q", p)
	default:
	}
}
