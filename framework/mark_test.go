package framework_test

import (
	"context"
	"errors"
	"fmt"
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

// A Mark (WithParentMark) is spent, as seen after any later reply of its
// client, by every change to the marked node that the server applied
// before that reply (a setData, a delete), and by a new connection even
// where nothing changed. It keeps no waiter, and costs no request beyond
// the create's parent read.
func TestMarkSpentByAnEarlierChange(t *testing.T) {
	px, c, other, ctx, reply := newMarkScene(t)
	mark := func() (*framework.Created, *framework.Mark) {
		t.Helper()
		if _, err := other.Create(ctx, "/p", nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
		px.ResetCounts()
		n, err := c.CreateNode(ctx, "/p/n-", nil, framework.WithMode(framework.ModeEphemeralSequential),
			framework.WithProtection(), framework.WithParentMark())
		if err != nil {
			t.Fatal(err)
		}
		if n.ParentMark == nil || n.Parent == nil || n.Parent.NumChildren != 1 {
			t.Fatalf("ParentMark %v, Parent %+v; want a mark and the parent's stat", n.ParentMark, n.Parent)
		}
		if g, w := px.Requests(zktest.OpGetData), px.WatchRequests(zktest.OpGetData); g != 1 || w != 1 {
			t.Errorf("%d getData, %d watched; want the one parent read, watched", g, w)
		}
		return &n, n.ParentMark
	}

	n, m := mark()
	reply()
	if !m.Intact() {
		t.Fatal("nothing changed, yet the mark is spent")
	}
	if got := c.MarkOn("/p"); got != m {
		t.Fatalf("MarkOn(/p) = %v, want the intact mark %v", got, m)
	}
	if c.MarkOn("/elsewhere") != nil || other.MarkOn("/p") != nil {
		t.Fatal("MarkOn found a mark on an unmarked path, or of another client")
	}
	if _, waiters := c.WatchStats(); waiters != 0 {
		t.Errorf("%d waiters kept for a mark, want 0", waiters)
	}
	if _, err := other.Set(ctx, "/p", []byte("x")); err != nil {
		t.Fatal(err)
	}
	reply()
	if m.Intact() {
		t.Error("the parent's data changed before a later reply, yet the mark is intact")
	}
	if c.MarkOn("/p") != nil {
		t.Error("MarkOn returned a spent mark")
	}
	if err := c.Delete(ctx, n.Path); err != nil {
		t.Fatal(err)
	}

	n, m = mark()
	if err := c.Delete(ctx, n.Path); err != nil { // a child's change is no change of the node
		t.Fatal(err)
	}
	if !m.Intact() {
		t.Fatal("deleting a child spent the parent's mark")
	}
	if err := other.Delete(ctx, "/p"); err != nil {
		t.Fatal(err)
	}
	reply()
	if m.Intact() {
		t.Error("the parent was deleted before a later reply, yet the mark is intact")
	}

	_, m = mark()
	px.Drop()
	reply() // on the next connection
	if m.Intact() {
		t.Error("a new connection left the mark intact (a mark claims one connection's order)")
	}
	if c.MarkOn("/p") != nil {
		t.Error("MarkOn returned a mark of an earlier connection")
	}
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

// A client keeps at most MaxParentMarks parent marks (issue 38, 4.): a
// lock on a persistent path marks it for good (go-zookeeper cannot remove
// a watch), so a client that locks many such paths would hold one server
// watch per path until its session ends. Past the bound a create reads
// the parent's stat alone; a parent already marked is marked again for
// free (the server keeps one watch per node and kind).
func TestParentMarksBounded(t *testing.T) {
	ns := framework.WithNamespace(testenv.Uniq("marks"))
	c := newClient(t, testenv.Shared().ConnectString(), ns)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	lock := func(i int) *framework.Created {
		t.Helper()
		p := fmt.Sprintf("/p%03d", i)
		if _, err := c.Create(ctx, p, nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
		n, err := c.CreateNode(ctx, p+"/n-", nil, framework.WithMode(framework.ModeEphemeralSequential),
			framework.WithProtection(), framework.WithParentMark())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, n.Path); err != nil {
			t.Fatal(err)
		}
		return &n
	}
	paths := framework.MaxParentMarks + 36
	for i := range paths {
		n := lock(i)
		if marked := n.ParentMark != nil; marked != (i < framework.MaxParentMarks) {
			t.Fatalf("create %d under a persistent parent: marked %v, want %v (MaxParentMarks %d)", i, marked, i < framework.MaxParentMarks, framework.MaxParentMarks)
		}
		if n.Parent == nil {
			t.Fatalf("create %d: no parent stat", i)
		}
	}
	if n := lock(0); n.ParentMark == nil {
		t.Errorf("a parent marked already is not marked again")
	}
	wc, err := testenv.Shared().WatchesBySession()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(wc[c.Session().ID()]); got != framework.MaxParentMarks {
		t.Errorf("server data watches of the session after locking %d persistent paths: %d, want MaxParentMarks (%d)", paths, got, framework.MaxParentMarks)
	}
}
