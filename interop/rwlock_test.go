package interop_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

func newRW(t *testing.T, c *framework.Client, path string) *locks.ReadWriteLock {
	t.Helper()
	rw, err := locks.NewReadWriteLock(c, path)
	if err != nil {
		t.Fatal(err)
	}
	return rw
}

// Readers of both languages share; a writer of either language excludes
// readers and writers of the other.
func testReadWrite(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 2)
	jr, jw := peers[0], peers[1]
	c := newClient(t, e)
	p := e.path(t)
	gr, gw := newRW(t, c, p), newRW(t, c, p)

	// A Curator reader and a gocurator reader hold together, and a second
	// Curator reader joins them; writers of both languages are kept out.
	checkName(t, readNodeRE, jr.must("read-acquire "+p+" 30000"), "Curator's read lock")
	if err := gr.Read().TryLock(ctx); err != nil {
		t.Fatalf("gocurator reader beside a Curator reader: %v", err)
	}
	checkName(t, readNodeRE, gr.Read().Node(), "gocurator's read lock")
	jw.must("read-acquire " + p + " 0")
	jw.must("read-release " + p)
	if a := jw.do("write-acquire " + p + " 0"); a != "timeout" {
		t.Fatalf("Curator writer while a Curator and a gocurator reader hold: %s", a)
	}
	if err := gw.Write().TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("gocurator writer while a Curator and a gocurator reader hold: %v", err)
	}
	jr.must("read-release " + p)
	if err := gr.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// A Curator writer excludes gocurator's readers and writers; a
	// gocurator reader waits for it.
	checkName(t, writeNodeRE, jw.must("write-acquire "+p+" 30000"), "Curator's write lock")
	if err := gr.Read().TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("gocurator reader while Curator writes: %v, want ErrLocked", err)
	}
	if err := gw.Write().TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("gocurator writer while Curator writes: %v, want ErrLocked", err)
	}
	r := async(func() error { return gr.Read().Lock(ctx) })
	awaitChildren(t, ctx, c, p, 2)
	stillBlocked(t, r, "gocurator reader while Curator writes")
	jw.must("write-release " + p)
	done(t, r, "gocurator reader once Curator's writer released")
	if err := gr.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// A gocurator writer excludes Curator's readers and writers; a Curator
	// reader waits for it.
	if err := gw.Write().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	checkName(t, writeNodeRE, gw.Write().Node(), "gocurator's write lock")
	if a := jr.do("read-acquire " + p + " 0"); a != "timeout" {
		t.Fatalf("Curator reader while gocurator writes: %s, want timeout", a)
	}
	if a := jw.do("write-acquire " + p + " 0"); a != "timeout" {
		t.Fatalf("Curator writer while gocurator writes: %s, want timeout", a)
	}
	a := jr.send("read-acquire " + p + " 120000")
	awaitChildren(t, ctx, c, p, 2)
	stillBlocked(t, a, "Curator reader while gocurator writes")
	if err := gw.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	jr.ok(a, "read-acquire")
	jr.must("read-release " + p)
	if kids := children(t, ctx, c, p); len(kids) != 0 {
		t.Fatalf("nodes left under %s: %v", p, kids)
	}
}

// A reader queued behind a writer of the other language waits, though
// only readers hold: readers and writers of both languages share one queue.
func testReadWriteQueue(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 2)
	jr, jw := peers[0], peers[1]
	c := newClient(t, e)

	// Curator reader holds, Curator writer queued, gocurator reader behind it.
	p := e.path(t)
	jr.must("read-acquire " + p + " 30000")
	aw := jw.send("write-acquire " + p + " 120000")
	awaitChildren(t, ctx, c, p, 2)
	g := newRW(t, c, p)
	r := async(func() error { return g.Read().Lock(ctx) })
	awaitChildren(t, ctx, c, p, 3)
	stillBlocked(t, r, "gocurator reader queued behind a Curator writer (only a Curator reader holds)")
	testenv.NotYet(t, aw, "Curator writer while a Curator reader holds")
	jr.must("read-release " + p)
	jw.ok(aw, "write-acquire")
	stillBlocked(t, r, "gocurator reader while the Curator writer ahead of it writes")
	jw.must("write-release " + p)
	done(t, r, "gocurator reader once the Curator writer ahead of it released")
	if err := g.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// gocurator reader holds, gocurator writer queued, Curator reader behind it.
	p = e.path(t)
	gr, gw := newRW(t, c, p), newRW(t, newClient(t, e), p)
	if err := gr.Read().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	w := async(func() error { return gw.Write().Lock(ctx) })
	awaitChildren(t, ctx, c, p, 2)
	ar := jr.send("read-acquire " + p + " 120000")
	awaitChildren(t, ctx, c, p, 3)
	stillBlocked(t, ar, "Curator reader queued behind a gocurator writer (only a gocurator reader holds)")
	testenv.NotYet(t, w, "gocurator writer while a gocurator reader holds")
	if err := gr.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	done(t, w, "gocurator writer once the reader released")
	stillBlocked(t, ar, "Curator reader while the gocurator writer ahead of it writes")
	if err := gw.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	jr.ok(ar, "read-acquire")
	jr.must("read-release " + p)
}

// containing returns the nodes whose name contains s.
func containing(nodes []string, s string) []string {
	var out []string
	for _, n := range nodes {
		if strings.Contains(filepath.Base(n), s) {
			out = append(out, n)
		}
	}
	return out
}

// Participant listings of the two halves, compared with Curator's: each
// half lists only its own nodes, in queue order, on both sides (Curator's
// InternalInterProcessMutex.getParticipantNodes filters on the lock name;
// gocurator does the same since issue 14), whatever the language of the
// node.
func testReadWriteParticipants(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 3)
	jr, jw, observer := peers[0], peers[1], peers[2]
	c := newClient(t, e)
	p := e.path(t)
	gr, gw := newRW(t, c, p), newRW(t, newClient(t, e), p)

	// Queue: Curator reader, gocurator reader (both hold), Curator writer,
	// gocurator writer (both wait).
	jr.must("read-acquire " + p + " 30000")
	if err := gr.Read().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	aw := jw.send("write-acquire " + p + " 120000")
	awaitChildren(t, ctx, c, p, 3)
	w := async(func() error { return gw.Write().Lock(ctx) })
	awaitChildren(t, ctx, c, p, 4)

	goRead, err := gr.Read().Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	goWrite, err := gw.Write().Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	javaRead := list(observer.must("participants-read " + p))
	javaWrite := list(observer.must("participants-write " + p))
	if len(javaRead) != 2 || len(javaWrite) != 2 {
		t.Fatalf("Curator lists readers %v and writers %v; want two of each", javaRead, javaWrite)
	}
	if !slices.Contains(javaRead, gr.Read().Node()) {
		t.Fatalf("Curator's readLock().getParticipantNodes() %v lacks gocurator's reader %s", javaRead, gr.Read().Node())
	}
	if !slices.Equal(goRead, javaRead) {
		t.Fatalf("Read().Participants() %v, Curator's readLock().getParticipantNodes() %v", goRead, javaRead)
	}
	if !slices.Equal(goWrite, javaWrite) {
		t.Fatalf("Write().Participants() %v, Curator's writeLock().getParticipantNodes() %v", goWrite, javaWrite)
	}
	if len(containing(goRead, "__READ__")) != 2 || len(containing(goWrite, "__WRIT__")) != 2 {
		t.Fatalf("halves: readers %v, writers %v; want two of each, of their own half", goRead, goWrite)
	}

	// Drain in queue order.
	jr.must("read-release " + p)
	if err := gr.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	jw.ok(aw, "write-acquire")
	stillBlocked(t, w, "gocurator writer queued behind Curator's")
	jw.must("write-release " + p)
	done(t, w, "gocurator writer")
	if err := gw.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Downgrade (a write holder takes the read lock, then releases the write
// lock). gocurator gives the read node its writer's sequence, as Curator
// does since 5.5.0 (CURATOR-621), so a writer queued meanwhile, of either
// language, stays out while the downgraded reader reads. Curator 5.4
// creates the read node at the end of the queue instead; a writer queued
// before it then gets the write lock while the downgraded reader still
// reads, whichever language that writer is: gocurator follows the layout
// exactly as a Curator writer does.
func testDowngrade(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 2)
	j1, j2 := peers[0], peers[1]
	c := newClient(t, e)

	// gocurator downgrades, a Curator writer is queued.
	p := e.path(t)
	g := newRW(t, c, p)
	wctx, err := g.Write().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wNode := g.Write().Node()
	aw := j1.send("write-acquire " + p + " 120000")
	awaitChildren(t, ctx, c, p, 2)
	if err := g.Read().Lock(wctx); err != nil {
		t.Fatalf("gocurator downgrade: %v", err)
	}
	rNode := g.Read().Node()
	checkName(t, readNodeRE, rNode, "gocurator's downgraded read lock")
	if seqOf(rNode) != seqOf(wNode) {
		t.Fatalf("gocurator's downgraded read node %s does not take its writer's place %s", rNode, wNode)
	}
	if err := g.Write().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	stillBlocked(t, aw, "Curator writer while gocurator reads after a downgrade")
	if err := g.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	j1.ok(aw, "write-acquire")
	j1.must("write-release " + p)

	// Curator downgrades, a writer is queued: first a Curator writer, then
	// a gocurator writer. Both must behave alike.
	type outcome struct {
		readSeq, queuedSeq string
		tookIt             bool // the queued writer got the write lock while the downgraded reader read
	}
	var outcomes []outcome
	for _, lang := range []string{"Curator", "gocurator"} {
		p := e.path(t)
		wNode := j1.must("write-acquire " + p + " 30000")
		var (
			javaW <-chan string
			goW   <-chan error
			gw    *locks.ReadWriteLock
		)
		if lang == "Curator" {
			javaW = j2.send("write-acquire " + p + " 120000")
		} else {
			gw = newRW(t, newClient(t, e), p)
			goW = async(func() error { return gw.Write().Lock(ctx) })
		}
		kids := awaitChildren(t, ctx, c, p, 2)
		queued := kids[0]
		if p+"/"+queued == wNode {
			queued = kids[1]
		}
		rNode := j1.must("read-acquire " + p + " 0") // the write holder reads at once
		checkName(t, readNodeRE, rNode, "Curator's downgraded read lock")
		j1.must("write-release " + p)
		o := outcome{readSeq: seqOf(rNode), queuedSeq: seqOf(queued)}
		ahead := o.queuedSeq < o.readSeq
		switch {
		case ahead && lang == "Curator":
			j2.ok(javaW, "write-acquire")
			o.tookIt = true
		case ahead:
			done(t, goW, "gocurator writer queued ahead of Curator's downgraded reader")
			o.tookIt = true
		case lang == "Curator":
			stillBlocked(t, javaW, "Curator writer queued behind Curator's downgraded reader")
		default:
			stillBlocked(t, goW, "gocurator writer queued behind Curator's downgraded reader")
		}
		t.Logf("Curator downgrade: writer %s, read node %s, queued %s writer %s: it %s",
			filepath.Base(wNode), filepath.Base(rNode), lang, queued,
			map[bool]string{true: "took the write lock while the downgraded reader still read", false: "waited"}[o.tookIt])
		outcomes = append(outcomes, o)
		j1.must("read-release " + p)
		if lang == "Curator" {
			if !o.tookIt {
				j2.ok(javaW, "write-acquire")
			}
			j2.must("write-release " + p)
		} else {
			if !o.tookIt {
				done(t, goW, "gocurator writer")
			}
			if err := gw.Write().Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if outcomes[0].tookIt != outcomes[1].tookIt {
		t.Fatalf("after a Curator downgrade a queued Curator writer %v, a queued gocurator writer %v", outcomes[0], outcomes[1])
	}
	if outcomes[0].tookIt {
		t.Logf("Curator (this version) downgrades as 5.4 does, before CURATOR-621: the read node gets a new sequence (%s) after the queued writer's (%s)",
			outcomes[0].readSeq, outcomes[0].queuedSeq)
	}
}
