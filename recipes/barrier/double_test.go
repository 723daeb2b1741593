package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/testing/zktest"
)

func newDouble(t testing.TB, c *framework.Client, path string, qty int) *barrier.DoubleBarrier {
	t.Helper()
	d, err := barrier.NewDoubleBarrier(c, path, qty)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func async(f func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	return done
}

// members returns the member nodes under path (all children but ready).
func members(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	return slices.DeleteFunc(testenv.Children(t, c, path), func(n string) bool { return n == "ready" })
}

func waitMembers(t testing.TB, c *framework.Client, path string, n int) {
	t.Helper()
	testenv.Eventually(t, testenv.WaitShort, fmt.Sprintf("%d members under %s", n, path), func() error {
		kids, _, err := c.Children(context.Background(), path)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		got := slices.DeleteFunc(kids, func(n string) bool { return n == "ready" })
		if len(got) != n {
			return fmt.Errorf("members %v", got)
		}
		return nil
	})
}

func TestNewDoubleBarrierInvalid(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	if _, err := barrier.NewDoubleBarrier(nil, "/b", 1); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil client: %v", err)
	}
	for _, qty := range []int{0, -1} {
		if _, err := barrier.NewDoubleBarrier(c, "/b", qty); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("memberQty %d: %v, want ErrInvalidArgument", qty, err)
		}
	}
	for _, p := range []string{"", "b", "/", "/b/"} {
		if _, err := barrier.NewDoubleBarrier(c, p, 1); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("path %q: %v, want ErrInvalidArgument", p, err)
		}
	}
	d := newDouble(t, c, barrierPath(t), 1)
	var nilCtx context.Context
	if err := d.Enter(nilCtx); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("Enter(nil): %v", err)
	}
	if err := d.Leave(nilCtx); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("Leave(nil): %v", err)
	}
}

// Leave before Enter, Enter twice; then a DoubleBarrier is reusable.
func TestDoubleBarrierStates(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	d := newDouble(t, c, path, 1)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if err := d.Leave(ctx); !errors.Is(err, curator.ErrNotHeld) {
		t.Fatalf("Leave before Enter: %v, want ErrNotHeld", err)
	}
	for round := range 2 {
		if err := d.Enter(ctx); err != nil {
			t.Fatalf("round %d: Enter: %v", round, err)
		}
		if err := d.Enter(ctx); !errors.Is(err, curator.ErrBusy) {
			t.Fatalf("round %d: second Enter: %v, want ErrBusy", round, err)
		}
		if d.Node() == "" {
			t.Fatalf("round %d: no Node() while entered", round)
		}
		if err := d.Leave(ctx); err != nil {
			t.Fatalf("round %d: Leave: %v", round, err)
		}
		if d.Node() != "" {
			t.Fatalf("round %d: Node() %q after Leave", round, d.Node())
		}
		if err := d.Leave(ctx); !errors.Is(err, curator.ErrNotHeld) {
			t.Fatalf("round %d: second Leave: %v, want ErrNotHeld", round, err)
		}
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// The layout: ephemeral protected "<path>/_c_<uuid>-member" members (a
// Curator member is "<path>/<uuid>") and a persistent "<path>/ready"; a
// member made by hand as a Curator client makes it counts, and Leave waits
// for it.
func TestDoubleBarrierLayoutAndCuratorMember(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	foreign := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	ctx := testenv.Ctx(t, testenv.WaitShort)

	// A "Curator" member: what DistributedDoubleBarrier.enter creates.
	javaNode := framework.JoinPath(path, framework.NewProtectedID())
	if _, err := foreign.Create(ctx, javaNode, []byte("10.0.0.1"),
		framework.WithMode(framework.ModeEphemeral), framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}

	d := newDouble(t, c, path, 2)
	if err := d.Enter(ctx); err != nil {
		t.Fatalf("Enter with a Curator member present: %v", err)
	}
	node := d.Node()
	name := framework.NodeName(node)
	if id, ok := framework.ProtectedID(name); framework.ParentPath(node) != path || !ok || !uuidRE.MatchString(id) || framework.NormalizeName(name) != "member" {
		t.Errorf("member node %q, want %s/_c_<uuid>-member", node, path)
	}
	ok, st, err := c.Exists(ctx, node)
	if err != nil || !ok || st.EphemeralOwner != c.Session().ID() {
		t.Errorf("member node: exists %v, err %v, stat %+v; want ephemeral of our session", ok, err, st)
	}
	ok, st, err = c.Exists(ctx, framework.JoinPath(path, "ready"))
	if err != nil || !ok || st.EphemeralOwner != 0 {
		t.Errorf("ready node: exists %v, err %v, stat %+v; want persistent", ok, err, st)
	}

	done := async(func() error { return d.Leave(ctx) })
	waitWaiters(t, c, 1) // waiting for the Curator member
	testenv.NotYet(t, done, "Leave while a Curator member is in")
	if err := foreign.Delete(ctx, javaNode); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, done, testenv.WaitShort, "Leave"); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
}

// inside counts the members between Enter and Leave.
type inside struct {
	mu         sync.Mutex
	now, peak  int
	everyoneIn chan struct{}
	want       int
}

func newInside(want int) *inside { return &inside{want: want, everyoneIn: make(chan struct{})} }

func (in *inside) enter() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.now++
	in.peak = max(in.peak, in.now)
	if in.now == in.want {
		close(in.everyoneIn)
	}
}

func (in *inside) leave() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.now--
}

// enterAll runs Curator's multi-member scenario: every member enters, sees
// all of them inside together, leaves.
func enterAll(t *testing.T, ds []*barrier.DoubleBarrier) *inside {
	t.Helper()
	in := newInside(len(ds))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	errs := group(len(ds), func(i int) error {
		if err := ds[i].Enter(ctx); err != nil {
			return fmt.Errorf("enter: %w", err)
		}
		in.enter()
		select {
		case <-in.everyoneIn:
		case <-ctx.Done():
			return errors.New("not all members inside together")
		}
		if err := ds[i].Leave(ctx); err != nil {
			return fmt.Errorf("leave: %w", err)
		}
		in.leave()
		return nil
	})
	checkErrs(t, errs)
	return in
}

// Curator's testMultiClient: 5 clients, all 5 inside together, peak 5,
// final 0.
func TestDoubleBarrierMultiClient(t *testing.T) {
	t.Parallel()
	const n = 5
	path := barrierPath(t)
	ds := make([]*barrier.DoubleBarrier, n)
	var c *framework.Client
	for i := range ds {
		c = newClient(t, testenv.Shared().ConnectString())
		ds[i] = newDouble(t, c, path, n)
	}
	in := enterAll(t, ds)
	if in.peak != n || in.now != 0 {
		t.Errorf("peak %d, final %d; want %d, 0", in.peak, in.now, n)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
}

// Curator's testBasic: the same with one shared client.
func TestDoubleBarrierBasic(t *testing.T) {
	t.Parallel()
	const n = 5
	c := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	ds := make([]*barrier.DoubleBarrier, n)
	for i := range ds {
		ds[i] = newDouble(t, c, path, n)
	}
	in := enterAll(t, ds)
	if in.peak != n || in.now != 0 {
		t.Errorf("peak %d, final %d; want %d, 0", in.peak, in.now, n)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
	if _, waiters := c.WatchStats(); waiters != 0 {
		t.Errorf("%d watch waiters left", waiters)
	}
}

// Curator's testOverSubscribed: 6 members for a threshold of 5, every
// member node made before anyone counts; all enter and leave.
func TestDoubleBarrierOverSubscribed(t *testing.T) {
	t.Parallel()
	const n, qty = 6, 5
	path := barrierPath(t)
	var created sync.WaitGroup
	created.Add(n)
	ds := make([]*barrier.DoubleBarrier, n)
	for i := range ds {
		ds[i] = newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, qty)
		barrier.SetHooks(ds[i], func() { created.Done(); created.Wait() })
	}
	in := enterAll(t, ds)
	if in.peak != n || in.now != 0 {
		t.Errorf("peak %d, final %d; want %d, 0", in.peak, in.now, n)
	}
}

// Curator's testSpuriousWakeup (apache/curator#1290): a waiting member is
// woken 10 times for nothing; it must not pass until a second member
// comes.
func TestDoubleBarrierSpuriousWakeup(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	d1 := newDouble(t, c, path, 2)
	wake := barrier.SetHooks(d1, nil)
	done := async(func() error { return d1.Enter(ctx) })
	for i := range 10 {
		select {
		case wake <- struct{}{}:
		case err := <-done:
			t.Fatalf("Enter returned after %d spurious wake-ups: %v", i, err)
		case <-ctx.Done():
			t.Fatal("the waiter never took the wake-up")
		}
	}
	testenv.NotYet(t, done, "Enter of the only member")
	if kids := testenv.Children(t, c, path); slices.Contains(kids, "ready") {
		t.Fatalf("ready made by a lone member: %v", kids)
	}
	d2 := newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, 2)
	if err := d2.Enter(ctx); err != nil {
		t.Fatalf("second member: %v", err)
	}
	if err := receive(t, done, testenv.WaitShort, "Enter"); err != nil {
		t.Fatalf("first member: %v", err)
	}
	errs := group(2, func(i int) error { return []*barrier.DoubleBarrier{d1, d2}[i].Leave(ctx) })
	checkErrs(t, errs)
}

// Real wake-ups that do not meet the threshold: members come and give up
// while one waits; it must not pass, and the ones that gave up leave no
// node behind.
func TestDoubleBarrierChurnDoesNotReleaseEarly(t *testing.T) {
	t.Parallel()
	const qty = 3
	c := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	first := newDouble(t, c, path, qty)
	done := async(func() error { return first.Enter(ctx) })
	waitMembers(t, c, path, 1)

	churn := newClient(t, testenv.Shared().ConnectString())
	for i := range 5 {
		d := newDouble(t, churn, path, qty)
		cctx, cancel := context.WithCancel(ctx)
		barrier.SetHooks(d, cancel) // give up as soon as our node exists
		err := d.Enter(cctx)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("churn %d: Enter: %v, want Canceled", i, err)
		}
		if d.Node() != "" {
			t.Fatalf("churn %d: still entered", i)
		}
		waitMembers(t, c, path, 1)
	}
	testenv.NotYet(t, done, "Enter of a lone member")
	if kids := testenv.Children(t, c, path); slices.Contains(kids, "ready") {
		t.Fatalf("ready made without %d members: %v", qty, kids)
	}

	rest := []*barrier.DoubleBarrier{
		newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, qty),
		newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, qty),
	}
	checkErrs(t, group(2, func(i int) error { return rest[i].Enter(ctx) }))
	if err := receive(t, done, testenv.WaitShort, "Enter"); err != nil {
		t.Fatalf("first member: %v", err)
	}
	all := append(rest, first)
	checkErrs(t, group(3, func(i int) error { return all[i].Leave(ctx) }))
}

// 20 members in 20 sessions go through the same barrier path 3 times.
// Nobody gets through Enter before all 20 have called it, nor through
// Leave before all 20 have called it, in every round.
func TestDoubleBarrierRounds(t *testing.T) {
	t.Parallel()
	const n, rounds = 20, 3
	path := barrierPath(t)
	var c *framework.Client
	ds := make([]*barrier.DoubleBarrier, n)
	for i := range ds {
		c = newClient(t, testenv.Shared().ConnectString())
		ds[i] = newDouble(t, c, path, n)
	}
	var entering, leaving [rounds]atomic.Int64
	ctx := testenv.Ctx(t, testenv.WaitLong)
	errs := group(n, func(i int) error {
		for r := range rounds {
			entering[r].Add(1)
			if err := ds[i].Enter(ctx); err != nil {
				return fmt.Errorf("round %d: enter: %w", r, err)
			}
			if got := entering[r].Load(); got != n {
				return fmt.Errorf("round %d: through Enter when %d of %d had called it", r, got, n)
			}
			leaving[r].Add(1)
			if err := ds[i].Leave(ctx); err != nil {
				return fmt.Errorf("round %d: leave: %w", r, err)
			}
			if got := leaving[r].Load(); got != n {
				return fmt.Errorf("round %d: through Leave when %d of %d had called it", r, got, n)
			}
		}
		return nil
	})
	checkErrs(t, errs)
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
}

// A member whose node someone else deletes while it waits in Enter is
// told (ErrNodeVanished, not a session loss).
func TestDoubleBarrierMemberDeleted(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	path := barrierPath(t)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	d := newDouble(t, c, path, 2)
	done := async(func() error { return d.Enter(ctx) })
	waitMembers(t, c, path, 1)
	if err := c.Delete(ctx, framework.JoinPath(path, members(t, c, path)[0])); err != nil {
		t.Fatal(err)
	}
	err := receive(t, done, testenv.WaitShort, "Enter")
	if !errors.Is(err, curator.ErrNodeVanished) || errors.Is(err, curator.ErrSessionLost) {
		t.Fatalf("Enter after our node was deleted: %v, want ErrNodeVanished only", err)
	}
}

// proxied returns a client connected through a proxy to the shared server,
// so that its session can be expired.
func proxied(t *testing.T) (*framework.Client, *zktest.Proxy) {
	t.Helper()
	p := zktest.StartProxy(t, testenv.Shared().Addr())
	return newClient(t, p.Addr()), p
}

func expire(t *testing.T, c *framework.Client, p *zktest.Proxy) {
	t.Helper()
	if err := zktest.ExpireSession(testenv.Ctx(t, testenv.WaitLong), p, testenv.Shared(), c.Session().ID()); err != nil {
		t.Fatal(err)
	}
}

func isSessionLoss(err error) bool {
	return errors.Is(err, curator.ErrNodeVanished) && errors.Is(err, curator.ErrSessionLost)
}

// A member's session expires while it waits in Enter: it is told
// (ErrNodeVanished + ErrSessionLost) and its node is gone. The others
// are not told: they keep waiting for memberQty members, and pass once
// the lost member enters again in its new session.
func TestDoubleBarrierSessionExpiresDuringEnter(t *testing.T) {
	t.Parallel()
	const qty = 3
	path := barrierPath(t)
	ca, p := proxied(t)
	cb := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	a, b := newDouble(t, ca, path, qty), newDouble(t, cb, path, qty)
	doneA := async(func() error { return a.Enter(ctx) })
	doneB := async(func() error { return b.Enter(ctx) })
	waitMembers(t, cb, path, 2)

	expire(t, ca, p)
	if err := receive(t, doneA, testenv.WaitLong, "Enter of the expired member"); !isSessionLoss(err) {
		t.Fatalf("Enter of the expired member: %v, want ErrNodeVanished and ErrSessionLost", err)
	}
	waitMembers(t, cb, path, 1)
	testenv.NotYet(t, doneB, "Enter of the other member")

	// The lost member comes back in its new session; a third one comes.
	if err := ca.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	c := newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, qty)
	checkErrs(t, group(2, func(i int) error { return []*barrier.DoubleBarrier{a, c}[i].Enter(ctx) }))
	if err := receive(t, doneB, testenv.WaitShort, "Enter of the other member"); err != nil {
		t.Fatalf("other member: %v", err)
	}
	all := []*barrier.DoubleBarrier{a, b, c}
	checkErrs(t, group(3, func(i int) error { return all[i].Leave(ctx) }))
}

// A member's session expires while it is inside: the others' Leave
// completes (a vanished member counts as left), and its own Leave says
// its session was lost.
func TestDoubleBarrierSessionExpiresInside(t *testing.T) {
	t.Parallel()
	const qty = 3
	path := barrierPath(t)
	ca, p := proxied(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	ds := []*barrier.DoubleBarrier{
		newDouble(t, ca, path, qty),
		newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, qty),
		newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, qty),
	}
	checkErrs(t, group(qty, func(i int) error { return ds[i].Enter(ctx) }))
	others := async(func() error {
		return errors.Join(group(2, func(i int) error { return ds[i+1].Leave(ctx) })...)
	})
	expire(t, ca, p)
	if err := receive(t, others, testenv.WaitLong, "Leave of the others"); err != nil {
		t.Fatalf("Leave of the others: %v", err)
	}
	if err := ds[0].Leave(ctx); !isSessionLoss(err) {
		t.Fatalf("Leave of the expired member: %v, want ErrNodeVanished and ErrSessionLost", err)
	}
}

// A member's session expires while it waits in Leave. If its node was
// still there (it was the lowest) its Leave fails with ErrSessionLost; if
// it had deleted its node already, the loss does not concern it and it
// completes with the others. The others complete either way.
func TestDoubleBarrierSessionExpiresDuringLeave(t *testing.T) {
	t.Parallel()
	const qty = 3
	path := barrierPath(t)
	ca, p := proxied(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	ds := []*barrier.DoubleBarrier{
		newDouble(t, ca, path, qty),
		newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, qty),
		newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, qty),
	}
	checkErrs(t, group(qty, func(i int) error { return ds[i].Enter(ctx) }))
	ours := framework.NodeName(ds[0].Node())
	all := members(t, ca, path)
	slices.Sort(all)
	lowest := all[0] == ours

	doneA := async(func() error { return ds[0].Leave(ctx) })
	waitWaiters(t, ca, 1)
	expire(t, ca, p)
	if lowest {
		if err := receive(t, doneA, testenv.WaitLong, "Leave of the expired member"); !isSessionLoss(err) {
			t.Fatalf("Leave of the expired lowest member: %v, want ErrSessionLost", err)
		}
	}
	checkErrs(t, group(2, func(i int) error { return ds[i+1].Leave(ctx) }))
	if !lowest {
		if err := receive(t, doneA, testenv.WaitLong, "Leave of the expired member"); err != nil {
			t.Fatalf("Leave of the expired member (its node already deleted): %v", err)
		}
	}
	waitMembers(t, ca, path, 0)
}

// A Leave that fails because our node vanished leaves the ready node
// alone (Curator's throws before its delete). Here B made its node, and
// so was counted, but has not looked yet when A opens the barrier; A's
// session then expires inside and its Leave fails. Had it deleted the
// ready node, B would count 1 member of 2 with no ready node and wait for
// good.
func TestDoubleBarrierFailedLeaveKeepsReady(t *testing.T) {
	t.Parallel()
	path := barrierPath(t)
	ca, p := proxied(t)
	cb := newClient(t, testenv.Shared().ConnectString())
	a, b := newDouble(t, ca, path, 2), newDouble(t, cb, path, 2)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	created, proceed := make(chan struct{}), make(chan struct{})
	barrier.SetHooks(b, func() {
		close(created)
		select { // B looks only once A has left
		case <-proceed:
		case <-ctx.Done():
		}
	})
	doneB := async(func() error { return b.Enter(ctx) })
	<-created
	if err := a.Enter(ctx); err != nil {
		t.Fatalf("A's Enter, counting B: %v", err)
	}
	expire(t, ca, p)
	if err := ca.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Leave(ctx); !isSessionLoss(err) {
		t.Fatalf("A's Leave after its session expired: %v, want ErrNodeVanished and ErrSessionLost", err)
	}
	if kids := testenv.Children(t, cb, path); !slices.Contains(kids, "ready") {
		t.Errorf("the failed Leave deleted the ready node: children %v; B, counted to open the barrier, cannot pass", kids)
	}
	close(proceed)
	if err := receive(t, doneB, testenv.WaitShort, "B's Enter"); err != nil {
		t.Fatalf("B's Enter: %v", err)
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatalf("B's Leave: %v", err)
	}
	if kids := testenv.Children(t, cb, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
}

// enterUncounted starts d's Enter and returns once d's member node exists
// (so it counts for the others) but before d counts; d goes on once
// proceed is closed (or ctx ends).
func enterUncounted(ctx context.Context, d *barrier.DoubleBarrier) (done <-chan error, proceed chan struct{}) {
	created, proceed := make(chan struct{}), make(chan struct{})
	barrier.SetHooks(d, func() {
		close(created)
		select {
		case <-proceed:
		case <-ctx.Done():
		}
	})
	done = async(func() error { return d.Enter(ctx) })
	select {
	case <-created:
	case <-ctx.Done():
	}
	return done, proceed
}

// openedBoth checks, after the opener a and the other member b passed
// Enter, that both are in with the ready node, then that both leave.
func openedBoth(t *testing.T, ctx context.Context, c *framework.Client, path string, a, b *barrier.DoubleBarrier) {
	t.Helper()
	if kids := testenv.Children(t, c, path); len(kids) != 3 || !slices.Contains(kids, "ready") || a.Node() == "" {
		t.Fatalf("children %v, opener's node %q; want both members and ready", kids, a.Node())
	}
	checkErrs(t, group(2, func(i int) error { return []*barrier.DoubleBarrier{a, b}[i].Leave(ctx) }))
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
}

// The member whose count opens the barrier is in once its transaction
// made the ready node: it does not list the members again, so its ctx
// ending right after (here while that listing was under way) cannot fail
// its Enter and delete its node while the other member passes, counted
// with it.
func TestDoubleBarrierOpenerEntersOnceReadyIsMade(t *testing.T) {
	t.Parallel()
	path := barrierPath(t)
	ca, p := proxied(t)
	cb := newClient(t, testenv.Shared().ConnectString())
	a, b := newDouble(t, ca, path, 2), newDouble(t, cb, path, 2)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	doneB, proceed := enterUncounted(ctx, b)

	multi := p.HoldReply(zktest.OpMulti)
	defer multi.Release()
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	doneA := async(func() error { return a.Enter(actx) })
	if err := multi.Wait(ctx); err != nil { // A counted B and made ready
		t.Fatal(err)
	}
	relist := p.HoldReply(zktest.OpGetChildren2)
	defer relist.Release()
	relisted := make(chan error, 1)
	go func() { relisted <- relist.Wait(ctx) }()
	multi.Release()
	var errA error
	select {
	case errA = <-doneA:
	case <-relisted:
		// A lists again: its ctx ends now, before it sees the listing
		// (released once A gave up and deletes its node).
		deletes := p.Requests(zktest.OpDelete)
		cancel()
		testenv.WaitFor(t, testenv.WaitShort, "the opener's next request", func() bool { return p.Requests(zktest.OpDelete) > deletes })
		relist.Release()
		errA = receive(t, doneA, testenv.WaitShort, "the opener's Enter")
	case <-ctx.Done():
		t.Fatal("the opener's Enter did not return")
	}
	relist.Release()
	close(proceed)
	if err := receive(t, doneB, testenv.WaitShort, "the other member's Enter"); err != nil {
		t.Fatalf("the other member's Enter: %v", err)
	}
	if errA != nil {
		t.Fatalf("the opener's Enter: %v; yet it made ready and the other member passed counting it (members now %v)", errA, members(t, cb, path))
	}
	openedBoth(t, ctx, cb, path, a, b)
}

// When ctx ends while the opener's transaction making the ready node is
// under way (its reply held by the proxy), the outcome is unknown: before
// giving up, the opener looks whether the ready node exists and its node
// is still its own. Both hold here, so its Enter succeeds; on the old code
// it failed and deleted its node while the other member passed, counted
// with it.
func TestDoubleBarrierOpenerUnansweredReadyCreate(t *testing.T) {
	t.Parallel()
	path := barrierPath(t)
	ca, p := proxied(t)
	cb := newClient(t, testenv.Shared().ConnectString())
	a, b := newDouble(t, ca, path, 2), newDouble(t, cb, path, 2)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	doneB, proceed := enterUncounted(ctx, b)

	multi := p.HoldReply(zktest.OpMulti)
	defer multi.Release()
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	doneA := async(func() error { return a.Enter(actx) })
	if err := multi.Wait(ctx); err != nil { // made on the server, A not told yet
		t.Fatal(err)
	}
	sent := func() int {
		return p.Requests(zktest.OpSync) + p.Requests(zktest.OpExists) + p.Requests(zktest.OpDelete)
	}
	before := sent()
	cancel()
	// A's transaction returned ctx's error once A sends its next request
	// (a look, or the delete of its node), whose reply is held behind.
	testenv.WaitFor(t, testenv.WaitShort, "the opener's next request", func() bool { return sent() > before })
	multi.Release()
	errA := receive(t, doneA, testenv.WaitShort, "the opener's Enter")
	close(proceed)
	if err := receive(t, doneB, testenv.WaitShort, "the other member's Enter"); err != nil {
		t.Fatalf("the other member's Enter: %v", err)
	}
	if errA != nil {
		t.Fatalf("the opener's Enter: %v; yet its ready node was made and the other member passed counting it (members now %v)", errA, members(t, cb, path))
	}
	openedBoth(t, ctx, cb, path, a, b)
}

// A member that gives up in Enter leaves no node and no watch behind: the
// server's watch count is back to 0 and the client keeps nothing.
func TestDoubleBarrierEnterTimeoutLeavesNothing(t *testing.T) {
	waitServerWatches(t, 0)
	c := newClient(t, quiet.ConnectString())
	path := barrierPath(t)
	d := newDouble(t, c, path, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := d.Enter(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter alone: %v, want DeadlineExceeded", err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
	waitServerWatches(t, 0)
	testenv.Eventually(t, testenv.WaitShort, "client watch entries gone", func() error {
		if armed, waiters := c.WatchStats(); armed != 0 || waiters != 0 {
			return fmt.Errorf("%d armed, %d waiters", armed, waiters)
		}
		return nil
	})
	// And the member can try again.
	other := newDouble(t, newClient(t, quiet.ConnectString()), path, 2)
	ctx2 := testenv.Ctx(t, testenv.WaitShort)
	checkErrs(t, group(2, func(i int) error { return []*barrier.DoubleBarrier{d, other}[i].Enter(ctx2) }))
	checkErrs(t, group(2, func(i int) error { return []*barrier.DoubleBarrier{d, other}[i].Leave(ctx2) }))
	waitServerWatches(t, 0)
}

// Leave honors its deadline (CURATOR-233): a member that gives up leaves
// no node and no waiter behind, and deletes the ready node. The server
// keeps its watch on the other member's node until that node goes, then
// the count is back to 0.
func TestDoubleBarrierLeaveTimeout(t *testing.T) {
	waitServerWatches(t, 0)
	path := barrierPath(t)
	ca, cb := newClient(t, quiet.ConnectString()), newClient(t, quiet.ConnectString())
	a, b := newDouble(t, ca, path, 2), newDouble(t, cb, path, 2)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	checkErrs(t, group(2, func(i int) error { return []*barrier.DoubleBarrier{a, b}[i].Enter(ctx) }))
	nodeA, nodeB := framework.NodeName(a.Node()), framework.NodeName(b.Node())

	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	left := make(chan error, 1)
	go func() { left <- a.Leave(short) }()
	select {
	case err := <-left:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Leave while the other stays: %v, want DeadlineExceeded", err)
		}
	case <-time.After(testenv.WaitShort): // only a Leave that ignores its deadline gets here
		t.Fatalf("Leave with a 300ms deadline had not returned after %v", testenv.WaitShort)
	}
	t.Logf("Leave with a 300ms deadline returned after %v", time.Since(start))
	if got := testenv.Children(t, ca, path); !slices.Equal(got, []string{nodeB}) {
		t.Errorf("children after the timeout %v, want only the other member %s (ours %s; ready deleted)", got, nodeB, nodeA)
	}
	if _, waiters := ca.WatchStats(); waiters != 0 {
		t.Errorf("%d watch waiters after Leave gave up", waiters)
	}
	if w := sessionWatches(t, ca.Session().ID()); len(w) > 1 {
		t.Errorf("server watches of the member that gave up: %v; want at most the one on the other member's node", w)
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatalf("Leave of the other: %v", err)
	}
	waitServerWatches(t, 0)
	if kids := testenv.Children(t, ca, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
}

// Consecutive rounds on one path, at their most unlucky: a member still in
// Leave (its node deleted, waiting for the lowest) looks again only once
// the lowest has left and already entered the next round. It must not
// wait for that new member, which waits for it in Enter: the plain
// ZooKeeper recipe (and Curator) would deadlock here.
func TestDoubleBarrierNextRoundDoesNotBlockLeave(t *testing.T) {
	t.Parallel()
	path := barrierPath(t)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	ds := []*barrier.DoubleBarrier{
		newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, 2),
		newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, 2),
	}
	var round atomic.Int32
	round.Store(1)
	nextRound := make(chan struct{})
	var once sync.Once
	for _, d := range ds {
		barrier.SetHooks(d, func() {
			if round.Load() == 2 {
				once.Do(func() { close(nextRound) })
			}
		})
		barrier.SetLeaveHook(d, func(ours bool) {
			if !ours { // our node is deleted: look again only once the next round began
				select {
				case <-nextRound:
				case <-ctx.Done():
				}
			}
		})
	}
	checkErrs(t, group(2, func(i int) error { return ds[i].Enter(ctx) }))
	checkErrs(t, group(2, func(i int) error {
		if err := ds[i].Leave(ctx); err != nil {
			return fmt.Errorf("round 1: leave: %w", err)
		}
		round.Store(2)
		if err := ds[i].Enter(ctx); err != nil {
			return fmt.Errorf("round 2: enter: %w", err)
		}
		if err := ds[i].Leave(ctx); err != nil {
			return fmt.Errorf("round 2: leave: %w", err)
		}
		return nil
	}))
}

// Leave deletes only the ready node of its own round: here the round's
// ready node was already deleted (as its last leaver does) and a new round
// made its own; the member of the old round gives up leaving and must not
// delete the new round's ready node.
func TestDoubleBarrierLeaveKeepsNewerReady(t *testing.T) {
	t.Parallel()
	path := barrierPath(t)
	ready := framework.JoinPath(path, "ready")
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	old, next := newDouble(t, c, path, 1), newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, 1)
	if err := old.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, ready); err != nil {
		t.Fatal(err)
	}
	if err := next.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	_, st, err := c.Exists(ctx, ready)
	if err != nil || st == nil {
		t.Fatalf("the new round's ready node: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := old.Leave(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Leave while a member stays: %v, want DeadlineExceeded", err)
	}
	if _, st2, err := c.Exists(ctx, ready); err != nil || st2 == nil || st2.Czxid != st.Czxid {
		t.Fatalf("the new round's ready node was deleted by a member of the old round (%v)", err)
	}
	if err := next.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Errorf("left behind: %v", kids)
	}
}
