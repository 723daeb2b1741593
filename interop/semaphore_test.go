package interop_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

// InterProcessSemaphoreV2 and semaphore.Semaphore on one path, maximum 2:
// leases of both languages count together, a third acquirer of either
// language waits until a lease of the other returns, and both list all
// leases.
func testSemaphore(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 3)
	j1, j2, observer := peers[0], peers[1], peers[2]
	c1, c2 := newClient(t, e), newClient(t, e)
	p := e.path(t)
	leases := p + "/leases"
	s1, err := semaphore.New(c1, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := semaphore.New(c2, p, 2)
	if err != nil {
		t.Fatal(err)
	}

	// One Curator lease and one gocurator lease fill it.
	jLease := j1.must("sem-acquire " + p + " 2 30000")
	checkName(t, leaseNodeRE, jLease, "Curator's lease")
	// (locks, the internal mutex's container, may already be reaped.)
	if kids := children(t, ctx, c1, p); !slices.Contains(kids, "leases") || len(kids) > 2 || len(kids) == 2 && kids[1] != "locks" {
		t.Fatalf("Curator's semaphore %s holds %v, want leases (and locks)", p, kids)
	}
	gLease, err := s1.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(gLease.Node()) != leases {
		t.Fatalf("gocurator's lease %s is not under %s", gLease.Node(), leases)
	}
	checkName(t, leaseNodeRE, gLease.Node(), "gocurator's lease")

	// Full: a third lease is refused at once on both sides, leaving nothing.
	if _, err := s2.TryAcquire(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("third lease (gocurator TryAcquire): %v, want ErrLocked", err)
	}
	if a := j2.do("sem-acquire " + p + " 2 0"); a != "timeout" {
		t.Fatalf("third lease (Curator acquire(0)): %s, want timeout", a)
	}
	want := []string{jLease, filepath.Base(gLease.Node())}
	slices.Sort(want)
	if kids := children(t, ctx, c1, leases); !slices.Equal(kids, want) {
		t.Fatalf("leases %v, want %v", kids, want)
	}
	if kids := children(t, ctx, c1, p+"/locks"); len(kids) != 0 {
		t.Fatalf("the internal lock is still held or queued: %v", kids)
	}

	// Both list both leases: Curator's getParticipantNodes gives names,
	// gocurator's Participants full paths.
	javaParts := list(observer.must("participants-sem " + p))
	slices.Sort(javaParts)
	goParts, err := s1.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var goNames []string
	for _, n := range goParts {
		goNames = append(goNames, filepath.Base(n))
	}
	slices.Sort(goNames)
	if !slices.Equal(javaParts, want) || !slices.Equal(goNames, want) {
		t.Fatalf("participants: Curator %v, gocurator %v; want %v", javaParts, goParts, want)
	}

	// A Curator third acquirer waits until gocurator returns its lease.
	a := j2.send("sem-acquire " + p + " 2 120000")
	awaitChildren(t, ctx, c1, leases, 3)
	stillBlocked(t, a, "Curator's third lease while one Curator and one gocurator lease are out")
	if err := gLease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	jLease2 := j2.ok(a, "sem-acquire")
	awaitChildren(t, ctx, c1, leases, 2)

	// A gocurator third acquirer waits until Curator returns a lease.
	var gLease2 *semaphore.Lease
	r := async(func() (err error) { gLease2, err = s2.Acquire(ctx); return err })
	awaitChildren(t, ctx, c1, leases, 3)
	stillBlocked(t, r, "gocurator's third lease while two Curator leases are out")
	j1.must("sem-release " + p + " " + jLease)
	done(t, r, "gocurator's lease once Curator returned one")

	j2.must("sem-release " + p + " " + jLease2)
	if err := gLease2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, ctx, c1, leases); len(kids) != 0 {
		t.Fatalf("leases left: %v", kids)
	}
}

// InterProcessSemaphoreMutex and semaphore.Mutex exclude each other both ways.
func testSemaphoreMutex(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	p := e.path(t)
	m, err := semaphore.NewMutex(c, p)
	if err != nil {
		t.Fatal(err)
	}

	java.must("semmutex-acquire " + p + " 30000")
	if err := m.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("gocurator semaphore mutex TryLock while Curator holds: %v, want ErrLocked", err)
	}
	r := async(func() error { return m.Lock(ctx) })
	awaitChildren(t, ctx, c, p+"/leases", 2)
	stillBlocked(t, r, "gocurator semaphore mutex while Curator holds")
	java.must("semmutex-release " + p)
	done(t, r, "gocurator semaphore mutex once Curator released")

	if a := java.do("semmutex-acquire " + p + " 0"); a != "timeout" {
		t.Fatalf("Curator semaphore mutex acquire(0) while gocurator holds: %s, want timeout", a)
	}
	a := java.send("semmutex-acquire " + p + " 120000")
	awaitChildren(t, ctx, c, p+"/leases", 2)
	stillBlocked(t, a, "Curator semaphore mutex while gocurator holds")
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	java.ok(a, "semmutex-acquire")
	java.must("semmutex-release " + p)
	if kids := children(t, ctx, c, p+"/leases"); len(kids) != 0 {
		t.Fatalf("leases left: %v", kids)
	}
}

// SharedCount: one node, 4 bytes big-endian, read and written by both; a
// gocurator semaphore whose maximum is that count grows when Curator
// raises it.
func testSharedCount(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	p := e.path(t)
	countPath := p + "/count"

	sc, err := shared.NewCount(c, countPath, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if got := java.must("count-get " + countPath); got != "1" {
		t.Fatalf("Curator reads gocurator's seed as %s, want 1", got)
	}
	if data, _, err := c.Get(ctx, countPath); err != nil || !bytes.Equal(data, []byte{0, 0, 0, 1}) {
		t.Fatalf("count node holds %v (%v), want 4 bytes big-endian", data, err)
	}

	s, err := semaphore.NewWithSharedCount(c, p+"/sem", sc)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var l2 *semaphore.Lease
	r := async(func() (err error) { l2, err = s.Acquire(ctx); return err })
	awaitChildren(t, ctx, c, p+"/sem/leases", 2)
	stillBlocked(t, r, "second lease of a semaphore of 1")
	java.must("count-set " + countPath + " 2")
	done(t, r, "second lease once Curator raised the count to 2")

	if err := sc.SetCount(ctx, 70000); err != nil {
		t.Fatal(err)
	}
	if got := java.must("count-get " + countPath); got != strconv.Itoa(70000) {
		t.Fatalf("Curator reads gocurator's 70000 as %s", got)
	}
	for _, l := range []*semaphore.Lease{l1, l2} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
