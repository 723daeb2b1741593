package driver_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// An acquisition whose node is its path's only child right after its
// create holds without a read of its own: the create lists the queue
// behind it, in the same round trip (create, getChildren2, delete: two
// round trips). A Try behind another's holder answers on that listing too.
func TestAloneHoldsWithoutReading(t *testing.T) {
	s := newCreateScene(t, "/alone")
	px, c, other, ctx, path := s.px, s.c, s.other, s.ctx, s.path
	d := newDriver(t, c, path)
	for i := 0; i < 3; i++ {
		px.ResetCounts()
		ct, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, p, w := queueReads(px), s.parentReads(), px.WatchRequests(zktest.OpGetData); r != 1 || p != 0 || w != 0 {
			t.Errorf("uncontended acquisition %d: %d reads of the queue, %d parent stats, %d watched getData; want 1 (behind the create), 0, 0", i, r, p, w)
		}
		if err := ct.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}

	held, err := newDriver(t, other, path).Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		px.ResetCounts()
		if _, err := d.Acquire(ctx, nil, &driver.WaitOptions{Try: true}); err == nil {
			t.Fatal("Try while another holds: held")
		}
		if r, p := queueReads(px), s.parentReads(); r != 1 || p != 0 {
			t.Errorf("Try %d while another holds: %d reads of the queue, %d parent stats; want 1 (behind the create) and 0", i, r, p)
		}
	}
	if err := held.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}

// persistentPath makes the lock path a persistent node, which the server
// never reaps when it empties (a container would be, within a second on
// zktest's servers), and removes it at the end.
func persistentPath(t *testing.T, c *framework.Client, path string) {
	t.Helper()
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, path, nil, framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), path, framework.WithIgnoreMissing()) })
}

// Contenders of one client created at once on one path (a thousand
// waiters queued together) make one parent read between them, not one each
// (each a listing of the queue, and a goroutine to send it): a create made
// while another of the client's is in flight there reads no parent, and
// its first decision shares a reading (shared.go).
func TestConcurrentCreatesListOnce(t *testing.T) {
	s := newCreateScene(t, "/listonce")
	first, second := newDriver(t, s.c, s.path), newDriver(t, s.c, s.path)
	done := s.holdCreate(first, nil)
	w, err := second.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.parentReads() + queueReads(s.px); p != 0 {
		t.Errorf("a create while another of the client's is in flight: %d parent reads, want 0", p)
	}
	held := done()
	if p, r := s.parentReads(), queueReads(s.px); p != 0 || r != 1 {
		t.Errorf("both creates: %d parent stats, %d listings; want 0 and 1 (the first's)", p, r)
	}
	wDone := waitOn(s.ctx, w)
	gone(t, s.ctx, held)
	heldThenGone(t, s.ctx, w, wDone)
}

// The same holds for drivers that do not hand off (the read-write lock's,
// the semaphore's leases): a create while another of the client's is in
// flight on the path asks for no parent stat; one alone does.
func TestConcurrentCreatesReadNoParent(t *testing.T) {
	s := newCreateScene(t, "/noparent")
	first, second := s.twoLeases(s.c), s.twoLeases(s.c)
	done := s.holdCreate(first, nil)
	ct, err := second.Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.parentReads() + queueReads(s.px); p != 0 {
		t.Errorf("a create while another of the client's is in flight: %d parent reads, want 0", p)
	}
	held := done()
	if p := s.parentReads() + queueReads(s.px); p != 1 {
		t.Errorf("the first create (alone when it was decided): %d parent reads, want 1 (its listing)", p)
	}
	gone(t, s.ctx, held, ct)
}

// A create of another client in flight does not count: its reading could
// not be shared, so a driver that does not hand off still lists the queue
// behind its create, and decides with no read of its own (issue 16: the
// read-write lock's readers on four sessions of one process each made a
// read a round trip after their create, once the process's creates were
// counted together; 2 round trips for a read, not 3).
func TestCreatesOfOtherClientsDoNotCrowd(t *testing.T) {
	s := newCreateScene(t, "/notcrowded")
	done := s.holdCreate(s.twoLeases(s.other), nil)
	// The create is made and its reply held: a listing behind it is sent
	// by then; a read of its own would wait for the reply.
	held := s.px.HoldReply(zktest.OpCreate)
	type result struct {
		c   *driver.Contender
		err error
	}
	acquired, d := make(chan result, 1), s.twoLeases(s.c)
	go func() {
		ct, err := d.Acquire(s.ctx, nil, &driver.WaitOptions{})
		acquired <- result{ct, err}
	}()
	if err := held.Wait(s.ctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the queue listed behind the create", func() bool { return queueReads(s.px) == 1 })
	held.Release()
	r := testenv.Recv(t, acquired, testenv.WaitShort, "the acquisition")
	if r.err != nil {
		t.Fatal(r.err)
	}
	ct := r.c
	if r, p := queueReads(s.px), s.parentReads(); r != 1 || p != 0 {
		t.Errorf("an acquisition while another client's create is in flight: %d reads of the queue, %d parent stats; want 1 (its listing) and 0", r, p)
	}
	gone(t, s.ctx, done(), ct)
}

// createScene is a client through a proxy that counts its requests,
// another client, and a persistent lock path.
type createScene struct {
	t     *testing.T
	px    *zktest.Proxy
	c     *framework.Client
	other *framework.Client
	ctx   context.Context
	path  string
}

func newCreateScene(t *testing.T, root string) *createScene {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	s := &createScene{t: t, px: px, c: testenv.Client(t, px.Addr()), other: testenv.Client(t, testenv.Shared().ConnectString()),
		ctx: testenv.Ctx(t, testenv.WaitShort), path: testenv.Path(t, root)}
	persistentPath(t, s.other, s.path)
	return s
}

// twoLeases returns a driver of c on the scene's path that does not hand
// off: two holders, "lease-" nodes.
func (s *createScene) twoLeases(c *framework.Client) *driver.Driver {
	d, err := driver.New(c, s.path, "lease-", driver.MaxLeases(2))
	if err != nil {
		s.t.Fatal(err)
	}
	return d
}

// parentReads counts the reads a create may send behind it.
func (s *createScene) parentReads() int {
	return s.px.Requests(zktest.OpExists) + s.px.Requests(zktest.OpGetData)
}

// holdCreate starts an Enqueue by d and holds it in the create hook, once
// its parent read is decided and it is registered in flight, before it is
// sent; other creates go to also (nil: nothing). done lets it go and
// returns its contender.
func (s *createScene) holdCreate(d *driver.Driver, also func(by *driver.Driver)) (done func() *driver.Contender) {
	t := s.t
	in, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(driver.SetCreateHook(func(by *driver.Driver) {
		if by == d {
			close(in)
			<-release
		} else if also != nil {
			also(by)
		}
	}))
	type result struct {
		c   *driver.Contender
		err error
	}
	out := make(chan result, 1)
	go func() {
		c, err := d.Enqueue(s.ctx, nil)
		out <- result{c, err}
	}()
	select {
	case <-in:
	case <-s.ctx.Done():
		t.Fatal("the held create never started")
	}
	return func() *driver.Contender {
		close(release)
		select {
		case r := <-out:
			if r.err != nil {
				t.Fatal(r.err)
			}
			return r.c
		case <-s.ctx.Done():
			t.Fatal("the held create never returned")
			return nil
		}
	}
}
