package leader_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/testing/zktest"
)

// CURATOR-49: someone deletes the leader's node. The leader watches its own
// node, so its term ends at once (cause ErrLockLost) and a guarded write
// of it fails; the next in line leads; never both.
func TestLeaderNodeDeletedBySomeoneElse(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	admin := testenv.Client(t, testenv.Shared().ConnectString())
	a := newElection(t, testenv.Client(t, testenv.Shared().ConnectString()), path, "a")
	b := newElection(t, testenv.Client(t, testenv.Shared().ConnectString()), path, "b")
	aCtx := won(t, campaign(ctx, a), "a")
	bCh := campaign(ctx, b)
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { return len(testenv.Children(t, admin, path)) == 2 })
	shared := path + "-shared"
	if _, err := admin.Create(ctx, shared, nil); err != nil {
		t.Fatal(err)
	}
	defer admin.Delete(ctx, shared)
	if _, err := a.GuardedMulti(ctx, framework.SetDataOp{Path: shared, Data: []byte("a"), Version: -1}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, a.Node()); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, aCtx.Done(), testenv.WaitLong, "a's term to end")
	if !causeIs(aCtx, curator.ErrLockLost) {
		t.Fatalf("a's term ended with %v, want ErrLockLost", context.Cause(aCtx))
	}
	if _, err := a.GuardedMulti(ctx, framework.SetDataOp{Path: shared, Data: []byte("a late"), Version: -1}); !errors.Is(err, curator.ErrLockLost) && !errors.Is(err, curator.ErrNotHeld) {
		t.Fatalf("a's guarded write after its node was deleted: %v", err)
	}
	won(t, bCh, "b")
	if data, _, _ := admin.Get(ctx, shared); string(data) != "a" {
		t.Fatalf("the shared node holds %q", data)
	}
	if a.IsLeader() {
		t.Fatal("a still says it leads")
	}
}

// CURATOR-724: the whole election path is deleted (an operator, a wiped
// ensemble). Latches take part again with new nodes (and the path again),
// and exactly one leads.
func TestLatchPathDeleted(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	admin := testenv.Client(t, testenv.Shared().ConnectString())
	var ls []*leader.Latch
	for _, id := range []string{"a", "b", "c"} {
		l, err := leader.NewLatch(testenv.Client(t, testenv.Shared().ConnectString()), path, id)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	var lead *leader.Latch
	testenv.WaitFor(t, testenv.WaitLong, "a leader", func() bool {
		for _, l := range ls {
			if l.HasLeadership() {
				lead = l
			}
		}
		return lead != nil
	})
	first, err := lead.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "all in line", func() bool { return len(testenv.Children(t, admin, path)) == 3 })
	if err := admin.Delete(ctx, path, framework.WithChildren()); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, first.Done(), testenv.WaitLong, "the first term to end")
	testenv.WaitFor(t, testenv.WaitLong, "all back in line, one leader", func() bool {
		n := 0
		for _, l := range ls {
			if l.HasLeadership() {
				n++
			}
		}
		return n == 1 && len(testenv.Children(t, admin, path)) == 3
	})
}

// CURATOR-645: the predecessor goes after the waiter read the line and
// before it set its watch. The waiter reads the line again (it never starts
// over with a new node, which livelocked Curator's latches) and leads.
func TestPredecessorGoneBeforeWatch(t *testing.T) {
	later := testenv.RestoreLater(t) // before the client: restored once it is closed
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	c := testenv.Client(t, testenv.Shared().ConnectString())
	a := newElection(t, c, path, "a")
	if _, err := a.Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	hooked := make(chan struct{})
	later(driver.SetWaitHook(func(*driver.Contender) {
		once.Do(func() {
			if err := a.Resign(ctx); err != nil {
				t.Error(err)
			}
			close(hooked)
		})
	}))
	var nodes []string
	bNode := ""
	b2 := newElection(t, c, path, "b", leader.WithOnEnqueue(func(n string) { nodes = append(nodes, n); bNode = n }))
	won(t, campaign(ctx, b2), "b")
	testenv.Recv(t, hooked, testenv.WaitShort, "the wait hook")
	if len(nodes) != 1 || b2.Node() != bNode {
		t.Fatalf("b made nodes %v, leads with %s: it started over", nodes, b2.Node())
	}
	if kids := testenv.Children(t, c, path); len(kids) != 1 {
		t.Fatalf("line %v, want b's node alone", kids)
	}
}

// CURATOR-696: a participant found first in line whose session is lost
// before it claims must not lead on that node: the owner check fails, and
// it takes part again in its new session, leading on a node that session
// owns.
func TestOwnerCheckAfterExpiry(t *testing.T) {
	later := testenv.RestoreLater(t) // before the client: restored once it is closed
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	e := newElection(t, c, path, "a")
	var once sync.Once
	expired := make(chan int64, 1)
	later(leader.SetVerifyHook(func(string) {
		once.Do(func() {
			id := c.Session().ID()
			if err := zktest.ExpireSession(ctx, px, testenv.Shared(), id); err != nil {
				t.Error(err)
			}
			expired <- id
		})
	}))
	var events []string
	var mu sync.Mutex
	later(leader.SetEventHook(func(k string, stale bool) { mu.Lock(); events = append(events, k); mu.Unlock() }))
	lctx := won(t, campaign(ctx, e), "a")
	old := testenv.Recv(t, expired, testenv.WaitLong, "the session expired at the verify hook")
	if lctx.Err() != nil {
		t.Fatalf("the term is over already: %v", context.Cause(lctx))
	}
	s := c.Session()
	if s.ID() == old || s.Lost() {
		t.Fatalf("leading in session 0x%x, the expired one was 0x%x", s.ID(), old)
	}
	_, st, err := c.Exists(ctx, e.Node())
	if err != nil || st == nil || st.EphemeralOwner != s.ID() {
		t.Fatalf("the leader's node %s: %+v, %v; want it owned by 0x%x", e.Node(), st, err, s.ID())
	}
	if kids := testenv.Children(t, c, path); len(kids) != 1 {
		t.Fatalf("line %v, want one node", kids)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0] != "won" {
		t.Fatalf("owner events %v: the attempt should have gone on by itself to one win", events)
	}
}

// Under LoseOnSuspend (the default) a leader's term ends as soon as its
// connection is suspended, while its node still blocks everyone else: the
// next in line cannot lead before the old leader was told. An Election
// leaves the line then (its node deleted once reconnected).
func TestElectionSuspendEndsTermFirst(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	a := newElection(t, testenv.Client(t, px.Addr()), path, "a")
	b := newElection(t, testenv.Client(t, testenv.Shared().ConnectString()), path, "b")
	aCtx := won(t, campaign(ctx, a), "a")
	bCh := campaign(ctx, b)
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { ps, _ := b.Participants(ctx); return len(ps) == 2 })
	px.Drop()
	testenv.Recv(t, aCtx.Done(), testenv.WaitLong, "a's term to end")
	if !causeIs(aCtx, curator.ErrLockLost) {
		t.Fatalf("cause %v", context.Cause(aCtx))
	}
	won(t, bCh, "b")
	if a.IsLeader() {
		t.Fatal("a leads again")
	}
}

// A participant whose session expires while it waits takes part again in
// its new session, and leads when its turn comes.
func TestElectionWaiterSessionExpires(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	bc := testenv.Client(t, px.Addr())
	a := newElection(t, testenv.Client(t, testenv.Shared().ConnectString()), path, "a")
	b := newElection(t, bc, path, "b")
	won(t, campaign(ctx, a), "a")
	bCh := campaign(ctx, b)
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { ps, _ := a.Participants(ctx); return len(ps) == 2 })
	old := bc.Session()
	if err := zktest.ExpireSession(ctx, px, testenv.Shared(), old.ID()); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "b back in line in a new session", func() bool {
		ps, _ := a.Participants(ctx)
		return len(ps) == 2 && bc.Session() != old && b.Node() == ps[1].Node
	})
	waiting(t, bCh, "b")
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	won(t, bCh, "b")
}

// A stale report is inert: a term lost and a Campaign right after it. The
// new term is not ended by the old term's loss, whichever the owner hears
// first.
func TestStaleLossIsInert(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	admin := testenv.Client(t, testenv.Shared().ConnectString())
	e := newElection(t, c, path, "a")
	lctx := won(t, campaign(ctx, e), "a")
	if err := admin.Delete(ctx, e.Node()); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, lctx.Done(), testenv.WaitLong, "the term to end")
	next := won(t, campaign(ctx, e), "a again")
	if next.Err() != nil {
		t.Fatalf("the new term ended: %v", context.Cause(next))
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatalf("resigning the new term: %v", err)
	}
	if errors.Is(context.Cause(next), curator.ErrLockLost) {
		t.Fatal("the new term was ended by the old term's loss")
	}
}
