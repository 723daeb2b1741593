package driver_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
)

// Every shortcut can be turned off (for the bench, which measures what
// each buys), and the driver is correct without any: four sessions of one
// process, and one driver that is another process's, contend for one mutex
// and never hold it two at a time.
func TestShortcutsOff(t *testing.T) {
	if err := driver.SetShortcutsOff("handoff,nope"); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Fatalf("SetShortcutsOff of an unknown name: %v, want ErrInvalidArgument", err)
	}
	if err := driver.SetShortcutsOff("handoff, parent"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { driver.SetShortcutsOff("") })
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/off")
	var holders, max atomic.Int32
	var wg sync.WaitGroup
	for i := range 5 {
		d := newDriver(t, testenv.Client(t, testenv.Shared().ConnectString()), path)
		if driver.HandoffOn(d) {
			t.Fatal("the handoff is on although turned off")
		}
		if i == 4 {
			d.OtherProcess()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				c, err := d.Acquire(ctx, nil, &driver.WaitOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				for n := holders.Add(1); ; {
					if m := max.Load(); n <= m || max.CompareAndSwap(m, n) {
						break
					}
				}
				holders.Add(-1)
				if err := c.Delete(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if m := max.Load(); m != 1 {
		t.Fatalf("%d holders at once", m)
	}
}
