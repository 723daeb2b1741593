package leader_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/leader"
)

// Three participants in line: each leads in turn, in line order, on
// Curator's layout; Observe, Leader and Participants agree; tokens rise;
// Resign and Close end a term with their own causes; nothing stays behind.
func TestElectionTakesTurns(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	admin := testenv.Client(t, testenv.Shared().ConnectString())
	var es []*leader.Election
	var cs []*framework.Client
	for _, id := range []string{"a", "b", "c"} {
		c := testenv.Client(t, testenv.Shared().ConnectString())
		cs = append(cs, c)
		es = append(es, newElection(t, c, path, id))
	}
	obs := es[2].Observe(ctx)
	if l := next(t, obs); !l.IsNone() {
		t.Fatalf("before anyone campaigns, observed %+v, want nobody", l)
	}
	aCtx := won(t, campaign(ctx, es[0]), "a")
	bCh := campaign(ctx, es[1])
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { return len(testenv.Children(t, admin, path)) == 2 })
	cCh := campaign(ctx, es[2])
	testenv.WaitFor(t, testenv.WaitShort, "c in line", func() bool { return len(testenv.Children(t, admin, path)) == 3 })
	if _, err := es[1].Campaign(ctx); !errors.Is(err, curator.ErrBusy) {
		t.Fatalf("a second Campaign while one waits: %v, want ErrBusy", err)
	}
	waiting(t, bCh, "b")
	waiting(t, cCh, "c")

	for _, name := range testenv.Children(t, admin, path) {
		if !latchNodeRE.MatchString(name) {
			t.Errorf("node %q is not named as Curator's LeaderLatch names it", name)
		}
	}
	ps, err := es[1].Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, p := range ps {
		ids = append(ids, p.ID)
		if p.IsLeader != (i == 0) {
			t.Errorf("participant %d: %+v", i, p)
		}
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) || ps[0].Node != es[0].Node() {
		t.Fatalf("participants %+v, want a (leading, %s), b, c", ps, es[0].Node())
	}
	l, err := es[2].Leader(ctx)
	if err != nil || l.ID != "a" || l.Node != es[0].Node() {
		t.Fatalf("Leader() = %+v, %v; want a", l, err)
	}
	aTok, err := es[0].FencingToken(ctx)
	if err != nil || aTok != l.Token {
		t.Fatalf("a's token %d (%v), Leader's %d", aTok, err, l.Token)
	}
	if data, _, err := admin.Get(ctx, es[0].Node()); err != nil || string(data) != "a" {
		t.Fatalf("a's node holds %q (%v), want its id", data, err)
	}
	observeUntil(t, obs, "a", func(l leader.Leader) bool { return l.ID == "a" })

	// Resign: a's term ends (cause context.Canceled), b leads.
	if err := es[0].Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if !isDone(aCtx) || !causeIs(aCtx, context.Canceled) || es[0].IsLeader() {
		t.Fatalf("after Resign: a's context %v (cause %v), IsLeader %v", aCtx.Err(), context.Cause(aCtx), es[0].IsLeader())
	}
	if err := es[0].Resign(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Fatalf("Resign without leadership: %v, want ErrNotHeld", err)
	}
	bCtx := won(t, bCh, "b")
	bTok, err := es[1].FencingToken(ctx)
	if err != nil || bTok <= aTok {
		t.Fatalf("b's token %d (%v), a's was %d", bTok, err, aTok)
	}
	observeUntil(t, obs, "b", func(l leader.Leader) bool { return l.ID == "b" })
	waiting(t, cCh, "c")

	// Close: b's term ends (cause ErrClosed), c leads.
	if err := es[1].Close(); err != nil {
		t.Fatal(err)
	}
	if !causeIs(bCtx, curator.ErrClosed) {
		t.Fatalf("b's context after Close: cause %v, want ErrClosed", context.Cause(bCtx))
	}
	won(t, cCh, "c")
	observeUntil(t, obs, "c", func(l leader.Leader) bool { return l.ID == "c" })
	// Campaign while leading returns the current term.
	again, err := es[2].Campaign(ctx)
	if err != nil || again.Err() != nil {
		t.Fatalf("Campaign while leading: %v", err)
	}
	if err := es[2].Resign(ctx); err != nil {
		t.Fatal(err)
	}
	observeUntil(t, obs, "nobody", leader.Leader.IsNone)
	for _, e := range es {
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := <-obs; ok {
		t.Fatal("the observer's channel stays open after Close")
	}
	if kids := testenv.Children(t, admin, path); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
	for i, c := range cs {
		if _, w := c.WatchStats(); w != 0 {
			t.Errorf("client %d keeps %d watch waiters", i, w)
		}
	}
}

// Bad input is refused before any I/O with errors.Is-testable errors, and
// misuse changes nothing.
func TestElectionBadInput(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := testenv.Path(t, "/leader")
	for _, tc := range []struct {
		name string
		err  error
		make func() error
	}{
		{"nil client", curator.ErrInvalidArgument, func() error { _, err := leader.NewElection(nil, path, "x"); return err }},
		{"empty path", curator.ErrInvalidPath, func() error { _, err := leader.NewElection(c, "", "x"); return err }},
		{"relative path", curator.ErrInvalidPath, func() error { _, err := leader.NewElection(c, "a/b", "x"); return err }},
		{"root", curator.ErrInvalidPath, func() error { _, err := leader.NewLatch(c, "/", "x"); return err }},
		{"trailing slash", curator.ErrInvalidPath, func() error {
			_, err := leader.NewSelector(c, "/a/", "x", func(context.Context) error { return nil })
			return err
		}},
		{"empty id", curator.ErrInvalidArgument, func() error { _, err := leader.NewElection(c, path, ""); return err }},
		{"id not UTF-8", curator.ErrInvalidArgument, func() error { _, err := leader.NewLatch(c, path, "\xff"); return err }},
		{"nil function", curator.ErrInvalidArgument, func() error { _, err := leader.NewSelector(c, path, "x", nil); return err }},
		{"close mode on an Election", curator.ErrInvalidArgument, func() error {
			_, err := leader.NewElection(c, path, "x", leader.WithCloseMode(leader.CloseNotifyLeader))
			return err
		}},
		{"unknown close mode", curator.ErrInvalidArgument, func() error { _, err := leader.NewLatch(c, path, "x", leader.WithCloseMode(7)); return err }},
		{"unknown policy", curator.ErrInvalidArgument, func() error { _, err := leader.NewLatch(c, path, "x", leader.WithSuspendPolicy(9)); return err }},
		{"auto-requeue on a Latch", curator.ErrInvalidArgument, func() error { _, err := leader.NewLatch(c, path, "x", leader.WithAutoRequeue()); return err }},
		{"nil OnError", curator.ErrInvalidArgument, func() error {
			_, err := leader.NewSelector(c, path, "x", func(context.Context) error { return nil }, leader.WithOnError(nil))
			return err
		}},
	} {
		if err := tc.make(); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}

	e := newElection(t, c, path, "x")
	//lint:ignore SA1012 a nil context is the bad input under test
	if _, err := e.Campaign(nil); !errors.Is(err, curator.ErrInvalidArgument) { //nolint:staticcheck
		t.Errorf("Campaign(nil): %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Campaign(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Campaign with a done context: %v", err)
	}
	if _, err := e.FencingToken(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("FencingToken when not leading: %v", err)
	}
	if _, err := e.GuardedMulti(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("GuardedMulti when not leading: %v", err)
	}
	if err := e.Resign(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("Resign when not leading: %v", err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("misuse left nodes: %v", kids)
	}
	if _, err := e.Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := e.Campaign(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Campaign after Close: %v", err)
	}
	if err := e.Resign(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Resign after Close: %v", err)
	}
	if _, ok := <-e.Observe(ctx); ok {
		t.Error("Observe after Close gave a value")
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("nodes left after Close: %v", kids)
	}
	// A latch closed before Start cannot start; a selector likewise.
	l, _ := leader.NewLatch(c, path, "l")
	l.Close()
	if err := l.Start(); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}
	if _, err := l.Await(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Await after Close: %v", err)
	}
	s, _ := leader.NewSelector(c, path, "s", func(context.Context) error { return nil })
	if _, err := s.Requeue(); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Requeue before Start: %v", err)
	}
	s.Close()
	if err := s.Start(); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("selector Start after Close: %v", err)
	}
}

// A waiting Campaign whose ctx ends returns ctx's error, and its node is
// gone before it returns.
func TestElectionCampaignGivesUp(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := testenv.Path(t, "/leader")
	c := testenv.Client(t, testenv.Shared().ConnectString())
	a := newElection(t, c, path, "a")
	b := newElection(t, c, path, "b")
	if _, err := a.Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	bctx, cancel := context.WithCancel(ctx)
	ch := campaign(bctx, b)
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { return len(testenv.Children(t, c, path)) == 2 })
	cancel()
	if o := <-ch; !errors.Is(o.err, context.Canceled) {
		t.Fatalf("b's Campaign after its ctx ended: %v", o.err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 1 {
		t.Fatalf("after b gave up: %v, want a's node alone", kids)
	}
	// b may campaign again.
	ch = campaign(ctx, b)
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	won(t, ch, "b")
}
