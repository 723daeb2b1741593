package driver_test

import (
	"testing"

	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

func newRWDrivers(t *testing.T, s *createScene) (read, write func(onOther bool) *driver.Driver) {
	mk := func(name string, pred driver.Predicate) func(bool) *driver.Driver {
		return func(onOther bool) *driver.Driver {
			c := s.c
			if onOther {
				c = s.other
			}
			d, err := driver.New(c, s.path, name, pred, "__READ__", "__WRIT__")
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	return mk("__READ__", driver.NoneBefore("__WRIT__")), mk("__WRIT__", driver.MaxLeases(1))
}

// A contender of a driver that does not hand off (the read-write lock's)
// lists the queue right behind its create, in the same round trip, and
// decides on that listing (issue 16: a read among readers is a create and
// a delete, two round trips, where Curator's makes three). One that must
// wait marks its own node and watches the writer before it, and holds
// once that writer went without reading the queue again (onward.go).
func TestListedCreateDecides(t *testing.T) {
	pk := countParks(t) // before the scene's clients: restored after them
	s := newCreateScene(t, "/listed")
	px, ctx := s.px, s.ctx
	read, write := newRWDrivers(t, s)
	d := read(false)

	otherRead, err := read(true).Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	px.ResetCounts()
	ours, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, p := queueReads(px), s.parentReads(); r != 1 || p != 0 {
		t.Errorf("a read beside another read: %d reads of the queue, %d parent stats; want 1 (behind the create) and 0", r, p)
	}
	gone(t, ctx, ours)

	// A writer queued behind the other reader: our next read waits on it,
	// deciding on its create's listing.
	writer, err := write(true).Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	px.ResetCounts()
	next, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := waitOn(ctx, next)
	pk.waitParked(t, next, 1, "our read waits on the writer")
	if r, w := queueReads(px), px.WatchRequests(zktest.OpGetData); r != 1 || w != 2 {
		t.Errorf("a read behind a writer: %d reads of the queue, %d watched getData; want 1 (behind the create) and 2 (our mark, the writer)", r, w)
	}
	testenv.NotYet(t, done, "our read while a writer is queued before it")
	gone(t, ctx, otherRead, writer)
	heldThenGone(t, ctx, next, done)
	if r := queueReads(px); r != 1 {
		t.Errorf("woken by the writer's delete: %d reads of the queue in all, want 1 (onward)", r)
	}
}

// Nothing is read behind a create that nothing will decide on (EnqueueAs:
// the downgrade's read node, in its writer's place), nor a listing behind
// the create of a driver whose waits decide on watched reads
// (SetWatchesAll: the semaphore's lease wait; its count decides when it
// holds at once, and a listing it would read again with a watch), from
// its first create on, a Try's too: the parent's stat then.
func TestListedOnlyWhereItDecides(t *testing.T) {
	s := newCreateScene(t, "/listedwhere")
	px, ctx := s.px, s.ctx
	read, _ := newRWDrivers(t, s)
	px.ResetCounts()
	down, err := read(false).EnqueueAs(ctx, "__READ__0000000042", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, p := queueReads(px), s.parentReads(); r != 0 || p != 0 {
		t.Errorf("EnqueueAs: %d reads of the queue, %d parent stats; want 0 and 0", r, p)
	}
	gone(t, ctx, down)

	lease, err := driver.New(s.c, s.path, "lease-", driver.MaxLeases(2))
	if err != nil {
		t.Fatal(err)
	}
	lease.SetWatchesAll()
	fits := func(n int) bool { return n <= 2 }
	var leases []*driver.Contender
	for i, o := range []driver.WaitOptions{{WatchAll: true, Fits: fits}, {WatchAll: true, Fits: fits, Try: true}} {
		px.ResetCounts()
		l, err := lease.Acquire(ctx, nil, &o)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
		if r, p := queueReads(px), s.parentReads(); r != 0 || p != 1 {
			t.Errorf("lease %d (Try %v), fitting by its count: %d reads of the queue, %d parent stats; want 0 and 1", i, o.Try, r, p)
		}
	}
	gone(t, ctx, leases...)
}
