package framework_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// newMarkScene returns a client c through a proxy px, another client on
// the same namespace, a context, and reply: a request of c's, waited for
// (a mark is judged after a later reply).
func newMarkScene(t *testing.T) (px *zktest.Proxy, c, other *framework.Client, ctx context.Context, reply func()) {
	px = startProxyFor(t)
	ns := framework.WithNamespace(testenv.Uniq("mark"))
	c = newClient(t, px.Addr(), ns)
	other = newClient(t, testenv.Shared().ConnectString(), ns)
	ctx = testenv.Ctx(t, testenv.WaitLong)
	reply = func() {
		t.Helper()
		if _, _, err := c.Exists(ctx, "/elsewhere"); err != nil {
			t.Fatal(err)
		}
	}
	return px, c, other, ctx, reply
}

// MarkNode marks any node with one watched getData: the mark is spent, as
// seen after a later reply, by a change of the node, its deletion, or a
// new connection; it keeps no waiter; a missing node gets no mark and
// leaves nothing behind. A waiter's watch on the same node is the same
// server watch, and fires as before.
func TestMarkNode(t *testing.T) {
	px, c, other, ctx, reply := newMarkScene(t)
	mark := func() *framework.Mark {
		t.Helper()
		px.ResetCounts()
		m, err := c.MarkNode(ctx, "/n")
		if err != nil {
			t.Fatal(err)
		}
		if g, w := px.Requests(zktest.OpGetData), px.WatchRequests(zktest.OpGetData); g != 1 || w != 1 {
			t.Errorf("%d getData, %d watched; want one, watched", g, w)
		}
		if !m.Intact() {
			t.Fatal("a fresh mark is spent")
		}
		return m
	}

	if m, err := c.MarkNode(ctx, "/n"); !errors.Is(err, zk.ErrNoNode) || m != nil {
		t.Fatalf("MarkNode of a missing node: %v, %v; want no mark, ErrNoNode", m, err)
	}
	if armed, waiters := c.WatchStats(); armed != 0 || waiters != 0 {
		t.Fatalf("a failed mark left %d watches, %d waiters", armed, waiters)
	}
	if _, err := other.Create(ctx, "/n", nil); err != nil {
		t.Fatal(err)
	}

	m := mark()
	if _, waiters := c.WatchStats(); waiters != 0 {
		t.Errorf("%d waiters kept for a mark, want 0", waiters)
	}
	_, _, w, err := c.GetW(ctx, "/n") // a waiter on the marked node
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Set(ctx, "/n", []byte("x")); err != nil {
		t.Fatal(err)
	}
	reply()
	if m.Intact() {
		t.Error("the node's data changed before a later reply, yet the mark is intact")
	}
	select {
	case ev := <-w.C():
		if ev.Type != framework.EventNodeDataChanged {
			t.Errorf("the waiter's event: %v, want NodeDataChanged", ev.Type)
		}
	default:
		t.Error("the waiter on the marked node was not told of the change")
	}

	m = mark()
	px.Drop()
	reply() // on the next connection
	if m.Intact() {
		t.Error("a new connection left the mark intact (a mark claims one connection's order)")
	}

	m = mark()
	if err := other.Delete(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
	reply()
	if m.Intact() {
		t.Error("the node was deleted before a later reply, yet the mark is intact")
	}
	if armed, waiters := c.WatchStats(); armed != 0 || waiters != 0 {
		t.Errorf("%d watches, %d waiters left once the marked node is gone", armed, waiters)
	}
}
