package interop_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/barrier"
)

// DistributedBarrier and barrier.Barrier on one node: whoever sets it,
// whoever removes it, waiters of both languages go on once it is removed.
// Both make the barrier's parents container nodes, so the server reaps
// them once the barrier is gone.
func testBarrier(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	base := e.path(t)
	p := base + "/sub/barrier"
	b, err := barrier.NewBarrier(c, p)
	if err != nil {
		t.Fatal(err)
	}

	// Set by gocurator, removed by gocurator: the Curator waiter goes on.
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if a := java.do("barrier-wait " + p + " 0"); a != "timeout" {
		t.Fatalf("Curator waitOnBarrier(0) on gocurator's barrier: %s, want timeout", a)
	}
	a := java.send("barrier-wait " + p + " 120000")
	stillBlocked(t, a, "Curator waiting on gocurator's barrier")
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	java.ok(a, "barrier-wait")

	// Set by Curator, removed by Curator: the gocurator waiter goes on.
	java.must("barrier-set " + p)
	short, cancel := context.WithTimeout(ctx, blockedGrace)
	err = b.Wait(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("gocurator Wait on Curator's barrier: %v, want a timeout", err)
	}
	r := async(func() error { return b.Wait(ctx) })
	stillBlocked(t, r, "gocurator waiting on Curator's barrier")
	java.must("barrier-remove " + p)
	done(t, r, "gocurator waiter once Curator removed the barrier")

	// Set by one, removed by the other.
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	r = async(func() error { return b.Wait(ctx) })
	stillBlocked(t, r, "gocurator waiting on its barrier")
	java.must("barrier-remove " + p)
	done(t, r, "gocurator waiter once Curator removed gocurator's barrier")
	java.must("barrier-set " + p)
	a = java.send("barrier-wait " + p + " 120000")
	stillBlocked(t, a, "Curator waiting on its barrier")
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	java.ok(a, "barrier-wait")

	// Container parents, on both sides: once the barrier is removed the
	// server reaps its empty parent (zktest servers check every second).
	if os.Getenv("ZK_CONNECT") != "" {
		t.Log("external ZooKeeper (ZK_CONNECT): not waiting for its container reaper")
		return
	}
	goBarrier, _ := barrier.NewBarrier(c, base+"/go/sub/barrier")
	if err := goBarrier.Set(ctx); err != nil {
		t.Fatal(err)
	}
	java.must("barrier-set " + base + "/java/sub/barrier")
	if err := goBarrier.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	java.must("barrier-remove " + base + "/java/sub/barrier")
	for _, parent := range []string{base + "/go/sub", base + "/java/sub"} {
		eventually(t, parent+" reaped as an empty container",
			func() bool { ok, _, err := c.Exists(ctx, parent); return err == nil && !ok },
			func() string { return "still there" })
	}
}

// DistributedDoubleBarrier and barrier.DoubleBarrier, 2 + 2 members of a
// barrier of 4: nobody enters until the fourth member does, nobody leaves
// until the fourth member leaves, whatever the language of the fourth.
// Two rounds on the same path: first a Curator member completes the entry
// and a gocurator member the exit, then the other way round.
func testDoubleBarrier(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 2)
	j1, j2 := peers[0], peers[1]
	c := newClient(t, e)
	p := e.path(t)
	var gs []*barrier.DoubleBarrier
	for i := 0; i < 2; i++ {
		g, err := barrier.NewDoubleBarrier(newClient(t, e), p, 4)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}

	type member struct {
		name  string
		java  *peer
		g     *barrier.DoubleBarrier
		async <-chan error  // gocurator's pending call
		ans   <-chan string // Curator's pending answer
	}
	start := func(m *member, op string) {
		if m.java != nil {
			m.ans = m.java.send("dbarrier-" + op + " " + p + " 4 120000")
			return
		}
		if op == "enter" {
			m.async = async(func() error { return m.g.Enter(ctx) })
		} else {
			m.async = async(func() error { return m.g.Leave(ctx) })
		}
	}
	blocked := func(m *member, what string, first bool) {
		t.Helper()
		switch {
		case m.java != nil && first:
			stillBlocked(t, m.ans, m.name+" "+what)
		case m.java != nil:
			testenv.NotYet(t, m.ans, m.name+" "+what)
		case first:
			stillBlocked(t, m.async, m.name+" "+what)
		default:
			testenv.NotYet(t, m.async, m.name+" "+what)
		}
	}
	finish := func(m *member, what string) {
		t.Helper()
		if m.java != nil {
			m.java.ok(m.ans, "dbarrier-"+what)
		} else {
			done(t, m.async, m.name+" "+what)
		}
	}
	members := func() []string {
		return slices.DeleteFunc(children(t, ctx, c, p), func(n string) bool { return n == "ready" })
	}
	round := func(order []*member) {
		t.Helper()
		// Enter: three members wait, the fourth lets everyone in.
		for i, m := range order[:3] {
			start(m, "enter")
			var seen []string
			eventually(t, m.name+" in the barrier",
				func() bool { seen = members(); return len(seen) == i+1 },
				func() string { return fmt.Sprint(seen) })
		}
		for i, m := range order[:3] {
			blocked(m, "entered with 3 members of 4", i == 0)
		}
		if kids := children(t, ctx, c, p); slices.Contains(kids, "ready") {
			t.Fatalf("ready made with 3 members of 4: %v", kids)
		}
		start(order[3], "enter")
		for _, m := range order {
			finish(m, "enter")
		}
		kids := children(t, ctx, c, p)
		if !slices.Contains(kids, "ready") || len(kids) != 5 {
			t.Fatalf("inside the barrier: %v, want 4 members and ready", kids)
		}
		for _, k := range members() {
			checkName(t, memberNodeRE, k, "barrier member")
		}
		// Leave, in the reverse order: three wait, the fourth lets everyone out.
		rev := slices.Clone(order)
		slices.Reverse(rev)
		for _, m := range rev[:3] {
			start(m, "leave")
		}
		for i, m := range rev[:3] {
			blocked(m, "left before the fourth member", i == 0)
		}
		start(rev[3], "leave")
		for _, m := range rev {
			finish(m, "leave")
		}
		if kids := children(t, ctx, c, p); len(kids) != 0 {
			t.Fatalf("after everyone left: %v", kids)
		}
	}

	cur1 := &member{name: "Curator member 1", java: j1}
	cur2 := &member{name: "Curator member 2", java: j2}
	go1 := &member{name: "gocurator member 1", g: gs[0]}
	go2 := &member{name: "gocurator member 2", g: gs[1]}
	round([]*member{go1, go2, cur1, cur2})
	round([]*member{cur1, cur2, go1, go2})
}
