package driver_test

import (
	"testing"

	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// An acquisition whose node is its path's only child right after its
// create (the parent's stat read in the same round trip) holds without
// reading the queue: a create, an exists behind it, no getChildren. Once a
// reading shows others, the driver stops asking for the parent's stat
// (it would be wasted) until a reading shows its node alone again.
func TestAloneHoldsWithoutReading(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := testenv.Path(t, "/alone")
	d := newDriver(t, c, path)
	warm, err := d.Acquire(ctx, nil, &driver.WaitOptions{}) // makes the path (its parent stat is not used)
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	reads := func() int { return px.Requests(zktest.OpGetChildren2) + px.Requests(zktest.OpGetChildren) }

	px.ResetCounts()
	ct, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, e := reads(), px.Requests(zktest.OpExists); r != 0 || e != 1 {
		t.Errorf("an uncontended acquisition: %d reads of the queue, %d exists; want 0 and 1", r, e)
	}
	if err := ct.Delete(ctx); err != nil {
		t.Fatal(err)
	}

	// Someone else holds: the stat shows two children, the queue is read,
	// and the next create asks for no stat.
	held, err := newDriver(t, other, path).Acquire(ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Acquire(ctx, nil, &driver.WaitOptions{Try: true}); err == nil {
		t.Fatal("Try while another holds: held")
	}
	px.ResetCounts()
	if _, err := d.Acquire(ctx, nil, &driver.WaitOptions{Try: true}); err == nil {
		t.Fatal("Try while another holds: held")
	}
	if e := px.Requests(zktest.OpExists); e != 0 {
		t.Errorf("after a busy reading: %d exists with the create, want none", e)
	}
	if err := held.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}
