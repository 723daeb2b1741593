package shared_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/shared"
)

// Issue 14 item 7: Count.Close racing Start (Close lands after
// Start's first read, before its watch starts) must not leave a watching
// goroutine behind: Start fails, and Close from several goroutines at once
// is safe.
func TestCountCloseDuringStart(t *testing.T) {
	const watcher = "recipes/shared.(*Value).Start"
	noWatcher := func(what string) {
		t.Helper()
		testenv.WaitFor(t, testenv.WaitShort, what, func() bool { return testenv.GoroutinesMadeBy(watcher) == 0 })
	}
	noWatcher("no shared count watching from an earlier test")
	later := testenv.RestoreLater(t) // hooks restored after the client is closed
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	sc, err := shared.NewCount(c, sharedPath(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	shared.SetStartHook(func(got *shared.Value) {
		if got == shared.ValueOf(sc) {
			sc.Close()
		}
	})
	later(func() { shared.SetStartHook(nil) })
	if err := sc.Start(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start closed meanwhile: %v, want an error wrapping ErrClosed", err)
	}
	shared.SetStartHook(nil)
	noWatcher("no watching goroutine left by the Start that Close overtook")

	// Concurrent and repeated Close of a started count.
	sc2, err := shared.NewCount(c, sharedPath(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if n := testenv.GoroutinesMadeBy(watcher); n == 0 {
		t.Fatal("no watching goroutine of a started count")
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); sc2.Close() }()
	}
	wg.Wait()
	sc2.Close()
	noWatcher("no watching goroutine left after Close")
	// Close before Start: Start is refused after it.
	sc3, err := shared.NewCount(c, sharedPath(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	sc3.Close()
	if err := sc3.Start(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start after Close: %v, want an error wrapping ErrClosed", err)
	}
	// Nor does a closed count write.
	if err := sc2.SetCount(ctx, 7); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("SetCount after Close: %v, want an error wrapping ErrClosed", err)
	}
	if ok, err := sc2.TrySetCount(ctx, sc2.VersionedValue(), 7); ok || !errors.Is(err, curator.ErrClosed) {
		t.Errorf("TrySetCount after Close: %v, %v, want an error wrapping ErrClosed", ok, err)
	}
	if v, _, err := c.Get(ctx, sc2.Path()); err != nil || string(v) != string(shared.EncodeCount(3)) {
		t.Errorf("the count after writes on a closed Count: %x, %v; want it unchanged (3)", v, err)
	}
}
