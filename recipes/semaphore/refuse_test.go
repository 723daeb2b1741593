package semaphore_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/semaphore"
)

// Issue 14 item 7: "not held" is one error across recipes: a lease
// returned twice, a semaphore mutex unlocked when not held and a multi-lock
// unlocked when not held all wrap curator.ErrNotHeld, which
// curator.ErrNotHeld is.
func TestNotHeldIsOneError(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	s := newSem(t, c, semPath(t), 1)
	l, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := semaphore.NewMutex(c, semPath(t))
	if err != nil {
		t.Fatal(err)
	}
	ml, err := multilock.New(m)
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Lease.Release twice":   l.Release(ctx),
		"Mutex.Unlock not held": m.Unlock(ctx),
		"MultiLock.Unlock":      ml.Unlock(ctx),
	} {
		if !errors.Is(err, curator.ErrNotHeld) {
			t.Errorf("%s: %v, want curator.ErrNotHeld", name, err)
		}
	}
}

// Issue 14 item 7: SharedCount.Close racing Start (Close lands after
// Start's first read, before its watch starts) must not leave a watching
// goroutine behind: Start fails, and Close from several goroutines at once
// is safe.
func TestSharedCountCloseDuringStart(t *testing.T) {
	const watcher = "recipes/semaphore.(*SharedCount).Start"
	noWatcher := func(what string) {
		t.Helper()
		testenv.WaitFor(t, testenv.WaitShort, what, func() bool { return testenv.GoroutinesMadeBy(watcher) == 0 })
	}
	noWatcher("no shared count watching from an earlier test")
	later := testenv.RestoreLater(t) // hooks restored after the client is closed
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	sc, err := semaphore.NewSharedCount(c, semPath(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	semaphore.SetStartHook(func(got *semaphore.SharedCount) {
		if got == sc {
			sc.Close()
		}
	})
	later(func() { semaphore.SetStartHook(nil) })
	if err := sc.Start(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start closed meanwhile: %v, want an error wrapping ErrClosed", err)
	}
	semaphore.SetStartHook(nil)
	noWatcher("no watching goroutine left by the Start that Close overtook")

	// Concurrent and repeated Close of a started count.
	sc2, err := semaphore.NewSharedCount(c, semPath(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if n := testenv.GoroutinesMadeBy(watcher); n != 1 {
		t.Fatalf("%d watching goroutines of a started count, want 1", n)
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
	sc3, err := semaphore.NewSharedCount(c, semPath(t), 3)
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
	if v, _, err := c.Get(ctx, sc2.Path()); err != nil || string(v) != string(semaphore.EncodeCount(3)) {
		t.Errorf("the count after writes on a closed SharedCount: %x, %v; want it unchanged (3)", v, err)
	}
}
