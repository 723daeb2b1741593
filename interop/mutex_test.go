package interop_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/semaphore"
)

// InterProcessMutex and locks.Mutex on one path: each excludes the other,
// each waits for the other, and both list the same queue.
func testMutex(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 2)
	java, observer := peers[0], peers[1]
	c := newClient(t, e)
	p := e.path(t)
	m, err := locks.NewMutex(c, p)
	if err != nil {
		t.Fatal(err)
	}

	// Curator holds: gocurator's TryLock fails and leaves nothing behind,
	// its Lock waits.
	jNode := java.must("mutex-acquire " + p + " 30000")
	checkName(t, lockNodeRE, jNode, "Curator's lock")
	if err := m.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("gocurator TryLock while Curator holds: %v, want ErrLocked", err)
	}
	if kids := children(t, ctx, c, p); len(kids) != 1 {
		t.Fatalf("after a failed TryLock the queue is %v, want Curator's node alone", kids)
	}
	got := async(func() error { return m.Lock(ctx) })
	awaitChildren(t, ctx, c, p, 2)
	goParts, err := m.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	javaParts := list(observer.must("participants-mutex " + p))
	if len(goParts) != 2 || goParts[0] != jNode || !slices.Equal(goParts, javaParts) {
		t.Fatalf("participants: gocurator %v, Curator %v; want both [Curator's %s, gocurator's waiter]", goParts, javaParts, jNode)
	}
	checkName(t, lockNodeRE, goParts[1], "gocurator's lock")
	stillBlocked(t, got, "gocurator's Lock while Curator holds the mutex")
	java.must("mutex-release " + p)
	done(t, got, "gocurator's Lock once Curator released")
	if m.Node() != goParts[1] {
		t.Fatalf("gocurator holds with %s, queued as %s", m.Node(), goParts[1])
	}

	// gocurator holds: Curator's acquire(0) fails and leaves nothing
	// behind, its acquire waits, and Curator's listing shows our node.
	if a := java.do("mutex-acquire " + p + " 0"); a != "timeout" {
		t.Fatalf("Curator acquire(0) while gocurator holds: %s, want timeout", a)
	}
	if kids := children(t, ctx, c, p); len(kids) != 1 {
		t.Fatalf("after Curator's failed acquire(0) the queue is %v, want ours alone", kids)
	}
	ans := java.send("mutex-acquire " + p + " 60000")
	awaitChildren(t, ctx, c, p, 2)
	javaParts = list(observer.must("participants-mutex " + p))
	goParts, _ = m.Participants(ctx)
	if len(javaParts) != 2 || javaParts[0] != m.Node() || !slices.Equal(goParts, javaParts) {
		t.Fatalf("participants: Curator %v, gocurator %v; want both [gocurator's %s, Curator's waiter]", javaParts, goParts, m.Node())
	}
	stillBlocked(t, ans, "Curator's acquire while gocurator holds the mutex")
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := java.ok(ans, "mutex-acquire"); n != javaParts[1] {
		t.Fatalf("Curator holds with %s, queued as %s", n, javaParts[1])
	}
	java.must("mutex-release " + p)
	if kids := children(t, ctx, c, p); len(kids) != 0 {
		t.Fatalf("nodes left under %s: %v", p, kids)
	}
}

// The queue is first come, first served across languages: with a
// gocurator holder and waiters queued Curator, gocurator, Curator,
// gocurator, each release hands the mutex to exactly the next one.
func testMutexQueueOrder(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 3)
	j1, j2, observer := peers[0], peers[1], peers[2]
	p := e.path(t)
	var ms []*locks.Mutex
	for i := 0; i < 3; i++ {
		m, err := locks.NewMutex(newClient(t, e), p)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	c := newClient(t, e)
	holder, g1, g2 := ms[0], ms[1], ms[2]
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	a1 := j1.send("mutex-acquire " + p + " 120000")
	awaitChildren(t, ctx, c, p, 2)
	r1 := async(func() error { return g1.Lock(ctx) })
	awaitChildren(t, ctx, c, p, 3)
	a2 := j2.send("mutex-acquire " + p + " 120000")
	awaitChildren(t, ctx, c, p, 4)
	r2 := async(func() error { return g2.Lock(ctx) })
	awaitChildren(t, ctx, c, p, 5)

	queue, err := holder.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if javaQueue := list(observer.must("participants-mutex " + p)); !slices.Equal(queue, javaQueue) || queue[0] != holder.Node() {
		t.Fatalf("queue: gocurator %v, Curator %v", queue, javaQueue)
	}

	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := j1.ok(a1, "mutex-acquire"); n != queue[1] {
		t.Fatalf("after the holder, %s holds; the queue was %v", n, queue)
	}
	stillBlocked(t, r1, "gocurator waiter #2 while Curator waiter #1 holds")
	testenv.NotYet(t, a2, "Curator waiter #3 while Curator waiter #1 holds")
	testenv.NotYet(t, r2, "gocurator waiter #4 while Curator waiter #1 holds")

	j1.must("mutex-release " + p)
	done(t, r1, "gocurator waiter #2 after Curator waiter #1 released")
	if g1.Node() != queue[2] {
		t.Fatalf("after Curator waiter #1, %s holds; the queue was %v", g1.Node(), queue)
	}
	stillBlocked(t, a2, "Curator waiter #3 while gocurator waiter #2 holds")
	testenv.NotYet(t, r2, "gocurator waiter #4 while gocurator waiter #2 holds")

	if err := g1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := j2.ok(a2, "mutex-acquire"); n != queue[3] {
		t.Fatalf("after gocurator waiter #2, %s holds; the queue was %v", n, queue)
	}
	stillBlocked(t, r2, "gocurator waiter #4 while Curator waiter #3 holds")

	j2.must("mutex-release " + p)
	done(t, r2, "gocurator waiter #4 after Curator waiter #3 released")
	if g2.Node() != queue[4] {
		t.Fatalf("last, %s holds; the queue was %v", g2.Node(), queue)
	}
	if err := g2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Revocation is Curator's: "__REVOKE__" written into the holder's node.
// A holder that armed it (makeRevocable, locks.WithRevocation) is told,
// whichever language asks; one that did not ignores it.
func testMutexRevocation(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)

	// Curator asks gocurator.
	p := e.path(t)
	asked := make(chan struct{}, 1)
	m, err := locks.NewMutex(c, p, locks.WithRevocation(func(context.Context) { asked <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get(ctx, m.Node()); err != nil || len(data) != 0 {
		t.Errorf("gocurator's revocable lock node holds %q (%v); Curator's revocable nodes are empty", data, err)
	}
	java.must("revoke " + m.Node())
	select {
	case <-asked:
	case <-time.After(eventTimeout):
		t.Fatal("Curator's Revoker.attemptRevoke did not reach gocurator's revocation function")
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// gocurator asks Curator.
	p = e.path(t)
	jNode := java.must("mutex-acquire-revocable " + p + " 30000")
	if data, _, err := c.Get(ctx, jNode); err != nil || len(data) != 0 {
		t.Errorf("Curator's revocable lock node holds %q (%v), want nothing", data, err)
	}
	if err := locks.Revoke(ctx, c, jNode); err != nil {
		t.Fatal(err)
	}
	var answer string
	eventually(t, "Curator's revocation listener called",
		func() bool { answer = java.must("revoked " + p); return answer == "true" },
		func() string { return answer })
	java.must("mutex-release " + p)

	// A holder that did not arm revocation ignores it.
	p = e.path(t)
	jNode = java.must("mutex-acquire " + p + " 30000")
	if err := locks.Revoke(ctx, c, jNode); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get(ctx, jNode); err != nil || string(data) != locks.RevokeMessage {
		t.Fatalf("after Revoke Curator's node holds %q (%v), want %q", data, err, locks.RevokeMessage)
	}
	if a := java.must("revoked " + p); a != "false" {
		t.Fatalf("Curator's unarmed mutex was told of a revocation: %s", a)
	}
	other, _ := locks.NewMutex(c, p)
	if err := other.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("gocurator TryLock while Curator holds (revocation ignored): %v", err)
	}
	java.must("mutex-release " + p)
}

// Default node data: Curator stores its local address
// (CuratorFrameworkFactory.getLocalAddress, InetAddress.getLocalHost()) in
// every lock node; gocurator's default data is the same address, found the
// same way (the host name's address), so on one machine the two lock nodes
// hold the same bytes (issue 14.6).
func testNodeData(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	jAddr := java.must("localaddress")
	jNode := java.must("mutex-acquire " + e.path(t) + " 30000")
	m, _ := locks.NewMutex(c, e.path(t))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(ctx)
	jData, _, err := c.Get(ctx, jNode)
	if err != nil {
		t.Fatal(err)
	}
	gData, _, err := c.Get(ctx, m.Node())
	if err != nil {
		t.Fatal(err)
	}
	if string(jData) != jAddr {
		t.Errorf("Curator's lock node holds %q, its local address is %q", jData, jAddr)
	}
	if !bytes.Equal(gData, c.DefaultData()) || len(gData) == 0 {
		t.Errorf("gocurator's lock node holds %q, its default data is %q", gData, c.DefaultData())
	}
	if !bytes.Equal(jData, gData) {
		t.Errorf("on this host Curator's lock node holds %q (InetAddress.getLocalHost()), gocurator's %q", jData, gData)
	}
}

// Children that are not contenders (a node someone else put under the lock
// path or the semaphore's leases). Curator 5.4 sorts every child of the
// lock path into getParticipantNodes and counts every child of leases
// against the maximum (LockInternals.getSortedChildren,
// InterProcessSemaphoreV2.internalAcquire1Lease); gocurator ignores
// children that are not named like contenders. Exclusion holds either way;
// the test logs the differences it shows.
func testForeignChildren(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)

	p := e.path(t)
	if _, err := c.Create(ctx, p+"/foreign", nil, framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}
	jNode := java.must("mutex-acquire " + p + " 30000")
	m, _ := locks.NewMutex(c, p)
	goParts, err := m.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	javaParts := list(java.must("participants-mutex " + p))
	if !slices.Contains(goParts, jNode) || !slices.Contains(javaParts, jNode) {
		t.Fatalf("participants: gocurator %v, Curator %v; both should show %s", goParts, javaParts, jNode)
	}
	if err := m.TryLock(ctx); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("gocurator TryLock while Curator holds: %v", err)
	}
	java.must("mutex-release " + p)
	if err := m.TryLock(ctx); err != nil {
		t.Fatalf("gocurator TryLock beside a foreign child: %v", err)
	}
	if a := java.do("mutex-acquire " + p + " 0"); a != "timeout" {
		t.Fatalf("Curator acquire(0) while gocurator holds: %s", a)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(goParts, javaParts) {
		t.Logf("DIFFERENCE: with a foreign child, Curator's mutex participants are %v, gocurator's %v", javaParts, goParts)
	}

	// Semaphore of 2 whose leases hold a foreign child: Curator counts it,
	// so it grants one lease; gocurator does not, so it grants a second.
	p = e.path(t)
	if _, err := c.Create(ctx, p+"/leases/foreign", nil, framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}
	java.must("sem-acquire " + p + " 2 30000")
	javaSecond := java.do("sem-acquire " + p + " 2 0")
	s, _ := semaphore.New(c, p, 2)
	l, goErr := s.TryAcquire(ctx)
	if javaSecond != "timeout" && !strings.HasPrefix(javaSecond, "ok") {
		t.Fatalf("Curator's second lease: %s", javaSecond)
	}
	if goErr != nil && !errors.Is(goErr, curator.ErrLocked) {
		t.Fatal(goErr)
	}
	if (javaSecond == "timeout") != (goErr != nil) {
		t.Logf("DIFFERENCE: semaphore of 2, one Curator lease and a foreign child under leases: a second Curator lease: %s; a second gocurator lease: %v",
			javaSecond, map[bool]string{true: "granted", false: "refused"}[goErr == nil])
	}
	if goErr == nil {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if strings.HasPrefix(javaSecond, "ok") {
		java.must("sem-release " + p)
	}
	java.must("sem-release " + p)
}
