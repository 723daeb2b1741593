package interop_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/testing/zktest"
)

var latchNodeRE = regexp.MustCompile(`^_c_` + uuidRE + `-latch-(\d{10})$`)

// goLatch starts a gocurator latch on its own client.
func goLatch(t *testing.T, c *framework.Client, path, id string) *leader.Latch {
	t.Helper()
	l, err := leader.NewLatch(c, path, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	return l
}

// leaders returns who leads, as each side says of itself: Go latches by
// HasLeadership, Curator latches by hasLeadership().
func leaders(t *testing.T, gos map[string]*leader.Latch, javas map[string]*peer, path string) []string {
	t.Helper()
	var out []string
	for id, l := range gos {
		if l.HasLeadership() {
			out = append(out, id)
		}
	}
	for id, p := range javas {
		if p.must("latch-has "+path) == "true" {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// exactlyLeader waits until want is the one leader of the mixed group.
func exactlyLeader(t *testing.T, gos map[string]*leader.Latch, javas map[string]*peer, path, want string) {
	t.Helper()
	var got []string
	eventually(t, want+" the only leader",
		func() bool { got = leaders(t, gos, javas, path); return slices.Equal(got, []string{want}) },
		func() string { return fmt.Sprint(got) })
}

// A mixed group of Curator and gocurator latches on one path: one leader,
// in line order across languages; both sides list the same participants
// and name the same leader; leadership passes between the languages as
// leaders close, both ways.
func testLeaderLatchMixed(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 3)
	j1, j2, observer := peers[0], peers[1], peers[2]
	c := newClient(t, e)
	p := e.path(t)

	j1.must("latch-start " + p + " j1")
	checkName(t, latchNodeRE, j1.must("latch-await "+p+" 60000"), "Curator's latch")
	g1 := goLatch(t, newClient(t, e), p, "g1")
	awaitChildren(t, ctx, c, p, 2)
	j2.must("latch-start " + p + " j2")
	awaitChildren(t, ctx, c, p, 3)
	g2 := goLatch(t, newClient(t, e), p, "g2")
	kids := awaitChildren(t, ctx, c, p, 4)
	for _, k := range kids {
		checkName(t, latchNodeRE, k, "a latch")
	}
	gos := map[string]*leader.Latch{"g1": g1, "g2": g2}
	javas := map[string]*peer{"j1": j1, "j2": j2}
	exactlyLeader(t, gos, javas, p, "j1")

	ps, err := g1.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var goView []string
	for _, x := range ps {
		goView = append(goView, x.ID+":"+strconv.FormatBool(x.IsLeader))
	}
	javaView := list(observer.must("latch-participants " + p))
	if want := []string{"j1:true", "g1:false", "j2:false", "g2:false"}; !slices.Equal(goView, want) || !slices.Equal(javaView, want) {
		t.Fatalf("participants: gocurator %v, Curator %v; want %v", goView, javaView, want)
	}
	if l, err := g2.Leader(ctx); err != nil || l.ID != "j1" {
		t.Fatalf("gocurator's Leader: %+v, %v", l, err)
	}

	j1.must("latch-close " + p)
	delete(javas, "j1")
	if _, err := g1.Await(ctx); err != nil {
		t.Fatal(err)
	}
	exactlyLeader(t, gos, javas, p, "g1")
	if got := observer.must("latch-leader " + p); got != "g1 true" {
		t.Fatalf("Curator's getLeader: %s, want g1", got)
	}
	if err := g1.Close(); err != nil {
		t.Fatal(err)
	}
	delete(gos, "g1")
	j2.must("latch-await " + p + " 60000")
	exactlyLeader(t, gos, javas, p, "j2")
	j2.must("latch-close " + p)
	delete(javas, "j2")
	if _, err := g2.Await(ctx); err != nil {
		t.Fatal(err)
	}
	exactlyLeader(t, gos, javas, p, "g2")
	if err := g2.Close(); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, ctx, c, p); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
}

// Session expiry passes leadership across the languages, both ways: the
// expired leader is told (Curator's notLeader; gocurator's leader context
// ends), the other leads, and the expired one takes part again behind it.
func testLeaderLatchExpiry(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	c := newClient(t, e)

	// Curator leads behind a proxy; its session expires; gocurator leads.
	jpx := zktest.StartProxy(t, e.zk.Addr())
	java := e.launch(t, "java-expiring")
	java.must("connect " + jpx.Addr() + e.zk.Chroot())
	java.must("latch-start " + p + " j")
	java.must("latch-await " + p + " 60000")
	gpx := zktest.StartProxy(t, e.zk.Addr())
	gc, err := framework.New(gpx.Addr()+e.zk.Chroot(), framework.WithSessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	g := goLatch(t, gc, p, "g")
	awaitChildren(t, ctx, c, p, 2)
	gos, javas := map[string]*leader.Latch{"g": g}, map[string]*peer{"j": java}
	exactlyLeader(t, gos, javas, p, "j")
	sid, err := strconv.ParseInt(java.must("session-id"), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, jpx, e.zk, sid); err != nil {
		t.Fatal(err)
	}
	lctx, err := g.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exactlyLeader(t, gos, javas, p, "g")
	awaitChildren(t, ctx, c, p, 2) // Curator's latch is back in line, in its new session
	var ev string
	eventually(t, "Curator's latch told of the loss", func() bool {
		ev = java.must("latch-events " + p)
		return strings.HasPrefix(ev, "leader,not")
	}, func() string { return ev })

	// gocurator leads behind a proxy; its session expires; Curator leads.
	if err := zktest.ExpireSession(ctx, gpx, e.zk, gc.Session().ID()); err != nil {
		t.Fatal(err)
	}
	<-lctx.Done()
	java.must("latch-await " + p + " 60000")
	exactlyLeader(t, gos, javas, p, "j")
	awaitChildren(t, ctx, c, p, 2)
	java.must("latch-close " + p)
	if _, err := g.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

// Curator's LeaderSelector and gocurator's Selector on one path (an
// InterProcessMutex's nodes): one runs at a time, and each turn passes to
// the other language, both ways, as turns end and as selectors close.
func testLeaderSelectorMixed(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	p := e.path(t)
	turns := make(chan chan struct{})
	s, err := leader.NewSelector(newClient(t, e), p, "g", func(ctx context.Context) error {
		done := make(chan struct{})
		select {
		case turns <- done:
		case <-ctx.Done():
			return nil
		}
		select {
		case <-done:
		case <-ctx.Done():
		}
		return nil
	}, leader.WithAutoRequeue())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	java.must("selector-start " + p + " j")
	java.must("selector-await " + p + " 60000")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	kids := awaitChildren(t, ctx, c, p, 2)
	for _, k := range kids {
		checkName(t, lockNodeRE, k, "a selector")
	}
	ps, err := s.Participants(ctx)
	if err != nil || len(ps) != 2 || ps[0].ID != "j" || !ps[0].IsLeader || ps[1].ID != "g" {
		t.Fatalf("participants %+v (%v), want j leading, then g", ps, err)
	}
	stillBlocked(t, turns, "gocurator's selector while Curator's leads")

	for round := 0; round < 2; round++ {
		java.must("selector-release " + p) // Curator's turn ends: it requeues behind us
		var done chan struct{}
		select {
		case done = <-turns:
		case <-ctx.Done():
			t.Fatal("gocurator's selector never led")
		}
		if java.must("selector-has "+p) != "false" || !s.HasLeadership() {
			t.Fatal("not exactly one leader")
		}
		awaitChildren(t, ctx, c, p, 2)
		close(done) // our turn ends: we requeue behind Curator
		java.must("selector-await " + p + " 60000")
		eventually(t, "gocurator's turn over", func() bool { return !s.HasLeadership() }, func() string { return "still leading" })
	}
	java.must("selector-close " + p)
	select {
	case done := <-turns:
		close(done)
	case <-ctx.Done():
		t.Fatal("gocurator's selector did not lead once Curator's closed")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no nodes", func() bool { return len(children(t, ctx, c, p)) == 0 }, func() string { return fmt.Sprint(children(t, ctx, c, p)) })
}
