package framework_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// children returns the children of path, failing the test on error.
func children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	kids, _, err := c.Children(testenv.Ctx(t, testenv.WaitShort), path)
	if err != nil {
		t.Fatalf("Children(%s): %v", path, err)
	}
	return kids
}

// A protected create whose response is lost (the server made the node, the
// client saw a connection loss) finds its node again by the protection
// prefix on the retry, and makes no second one.
func TestProtectedCreateLostResponse(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode framework.CreateMode
	}{
		{"persistent", framework.ModePersistent},
		{"persistent-sequential", framework.ModePersistentSequential},
		{"ephemeral", framework.ModeEphemeral},
		{"ephemeral-sequential", framework.ModeEphemeralSequential},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := zktest.StartProxy(t, testenv.Shared().Addr())
			// A 10 s session pings every 3.3 s: the request the proxy
			// drops the response of is the create, not a ping.
			c, log := newRecordedClient(t, p.Addr(), framework.WithNamespace(testenv.Uniq("protected")),
				framework.WithSessionTimeout(10*time.Second))
			ctx := testenv.Ctx(t, testenv.WaitShort)
			if _, err := c.Create(ctx, "/parent", nil); err != nil {
				t.Fatal(err)
			}
			log.wait(t, testenv.WaitShort, framework.StateConnected)
			sess := c.Session()

			p.DropAfterRequest(1)
			n, err := c.CreateNode(ctx, "/parent/node", []byte("x"), framework.WithProtection(), framework.WithMode(tc.mode))
			if err != nil {
				t.Fatalf("protected create across a lost response: %v", err)
			}
			// The connection was lost and found again: the response was lost.
			log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateReconnected)

			kids := children(t, c, "/parent")
			if len(kids) != 1 {
				t.Fatalf("children %v, want exactly one", kids)
			}
			if "/parent/"+kids[0] != n.Path {
				t.Fatalf("created %q, but the node is %q", n.Path, kids[0])
			}
			name := framework.NodeName(n.Path)
			if !framework.IsProtected(name) {
				t.Fatalf("%q is not a protected name", name)
			}
			norm := framework.NormalizeName(name)
			if tc.mode.Sequential() {
				if !strings.HasPrefix(norm, "node") || len(norm) != len("node")+10 {
					t.Fatalf("normalized name %q, want node + 10 digits", norm)
				}
			} else if norm != "node" {
				t.Fatalf("normalized name %q, want node", norm)
			}
			if tc.mode.Ephemeral() != (n.Session != nil) {
				t.Fatalf("Created.Session = %v for mode %v", n.Session, tc.mode)
			}
			if n.Session != nil && n.Session != sess {
				t.Fatalf("ephemeral node's session %x, want the client's %x", n.Session.ID(), sess.ID())
			}
			_, st, err := c.Get(ctx, n.Path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.mode.Ephemeral() && st.EphemeralOwner != sess.ID() {
				t.Fatalf("ephemeral owner %x, want %x", st.EphemeralOwner, sess.ID())
			}
		})
	}
}

// A protected create whose context ends while the response is delayed
// returns the context's error and leaves no node behind once the
// background clean-up has run.
func TestProtectedCreateContextEnds(t *testing.T) {
	for _, mode := range []framework.CreateMode{framework.ModePersistent, framework.ModePersistentSequential, framework.ModeEphemeral} {
		t.Run(modeName(mode), func(t *testing.T) { testContextEnds(t, mode) })
	}
}

func testContextEnds(t *testing.T, mode framework.CreateMode) {
	ns := testenv.Uniq("protected")
	p := zktest.StartProxy(t, testenv.Shared().Addr())
	c := newClient(t, p.Addr(), framework.WithNamespace(ns),
		framework.WithSessionTimeout(10*time.Second))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/parent", nil); err != nil {
		t.Fatal(err)
	}
	// A second client, not behind the proxy, sees the node come and go.
	watcher := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	_, _, w, err := watcher.ChildrenW(ctx, "/parent")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	p.SetDelay(time.Second)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = c.Create(short, "/parent/node", []byte("x"), framework.WithProtection(), framework.WithMode(mode))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("create past its deadline: %v, want DeadlineExceeded", err)
	}
	// The create reaches the server after the delay: the node is made.
	if ev := waitEvent(t, w, testenv.WaitShort); ev.Type != framework.EventNodeChildrenChanged {
		t.Fatalf("watch event %+v", ev)
	}
	p.Heal()
	if err := c.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, watcher, "/parent"); len(kids) != 0 {
		t.Fatalf("children after the clean-up: %v, want none", kids)
	}
	if n := c.PendingBackground(); n != 0 {
		t.Fatalf("PendingBackground = %d", n)
	}
}

// CURATOR-498: a protected ephemeral node found on a retry after the
// session changed belongs to a session that is gone; it is not adopted:
// it is deleted and a node of the current session made instead.
func TestProtectedEphemeralNotAdoptedAfterSessionChange(t *testing.T) {
	for _, mode := range []framework.CreateMode{framework.ModeEphemeral, framework.ModeEphemeralSequential} {
		t.Run(modeName(mode), func(t *testing.T) {
			testNotAdopted(t, mode)
		})
	}
}

func testNotAdopted(t *testing.T, mode framework.CreateMode) {
	ns := testenv.Uniq("protected498")
	p := zktest.StartProxy(t, testenv.Shared().Addr())
	// The client declares the session lost, disconnected, 30% of its 10 s
	// timeout after it sent the last request answered, while the server
	// keeps it for the full 10 s after receiving that request: the
	// old session's node is still there when the client retries in its
	// new session.
	c, log := newRecordedClient(t, p.Addr(), framework.WithNamespace(ns),
		framework.WithSessionTimeout(10*time.Second),
		framework.WithSessionExpirationPercent(30),
		framework.WithConnectionTimeout(30*time.Second))
	observer := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/parent", nil); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	old := c.Session()

	// The create gets through, its response is lost, and the client
	// cannot reconnect until it has declared its session lost.
	p.Refuse(true)
	p.DropAfterRequest(1)
	type result struct {
		n   framework.Created
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := c.CreateNode(ctx, "/parent/node", []byte("x"), framework.WithProtection(), framework.WithMode(mode))
		done <- result{n, err}
	}()
	log.wait(t, testenv.WaitLong, framework.StateConnected, framework.StateSuspended, framework.StateLost)
	// The orphan of the old session is on the server.
	var orphan string
	testenv.Eventually(t, testenv.WaitShort, "the old session's node exists", func() error {
		kids, _, err := observer.Children(ctx, "/parent")
		if err != nil {
			return err
		}
		if len(kids) != 1 {
			return errors.New("no single child")
		}
		orphan = "/parent/" + kids[0]
		return nil
	})
	_, orphanStat, err := observer.Get(ctx, orphan)
	if err != nil || orphanStat.EphemeralOwner != old.ID() {
		t.Fatalf("orphan %s: stat %+v err %v; want owner %x", orphan, orphanStat, err, old.ID())
	}
	p.Refuse(false)

	r := <-done
	if r.err != nil {
		t.Fatalf("protected create across a session change: %v", r.err)
	}
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateLost, framework.StateReconnected)
	now := c.Session()
	if r.n.Session != now || now == nil || now.ID() == old.ID() {
		t.Fatalf("created in session %v, want the new current one (old %x)", r.n.Session, old.ID())
	}
	if err := c.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
	kids := children(t, observer, "/parent")
	if len(kids) != 1 || "/parent/"+kids[0] != r.n.Path {
		t.Fatalf("children %v, want only %s", kids, r.n.Path)
	}
	_, st, err := observer.Get(ctx, r.n.Path)
	if err != nil || st.EphemeralOwner != now.ID() || st.Czxid == orphanStat.Czxid {
		t.Fatalf("node %s: stat %+v err %v; want a new node (not czxid %d) owned by %x",
			r.n.Path, st, err, orphanStat.Czxid, now.ID())
	}
	if mode.Sequential() {
		if ok, _, _ := observer.Exists(ctx, orphan); ok {
			t.Fatalf("the orphan %s is still there", orphan)
		}
	}
}
