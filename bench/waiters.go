package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// waiters: W contenders in ONE process on ONE session, each its own lock
// object on one path. A holder (one more lock object on the same session)
// takes the lock; the W waiters queue; once all W nodes exist (and, where
// the server answers wchp, W nodes are watched: the W predecessor watches
// are set, everyone is parked or about to be) the holder releases and each waiter acquires and at once releases
// in turn. The figure is W handoffs over the time from the holder's release
// call to the last acquisition; the process's peak RSS (VmHWM) at the end
// is the memory figure.
func waitersWL(c *config, lib library, w int) *Result {
	s := openSessions(c, lib, 1)[0]
	warm := must(s.mutex(c.root + "/warm"))
	for range c.warmup {
		if err := warm.lock(bg); err != nil {
			fail("warm-up: %v", err)
		}
		if err := warm.unlock(bg); err != nil {
			fail("warm-up release: %v", err)
		}
	}
	path := c.root + "/lock"
	holder := must(s.mutex(path))
	if err := holder.lock(bg); err != nil {
		fail("holder: %v", err)
	}
	h := &holders{limit: 1}
	h.enter("waiters (holder)")
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) }
	var lastRelease, lastAcquire, handoffs, done atomic.Int64
	lat := make([]time.Duration, w)
	q0 := time.Now()
	for i := range w {
		go func() {
			m := must(s.mutex(path))
			if err := m.lock(bg); err != nil {
				fail("waiter %d: %v", i, err)
			}
			t := now()
			h.enter("waiters")
			lat[handoffs.Add(1)-1] = time.Duration(t - lastRelease.Load())
			lastAcquire.Store(t)
			h.leave()
			lastRelease.Store(now())
			if err := m.unlock(bg); err != nil {
				fail("waiter %d release: %v", i, err)
			}
			done.Add(1)
			progress.Add(1)
		}()
	}
	for last := -1; ; time.Sleep(20 * time.Millisecond) {
		n := must(s.children(bg, path))
		if n != last {
			last = n
			progress.Add(1)
		}
		if n >= w+1 {
			break
		}
	}
	watches := awaitWatches(c.connect, path, w)
	queue := time.Since(q0)
	threads := procStatus("Threads")

	cpu0 := cpuTime()
	t0 := now()
	lastRelease.Store(t0)
	h.leave()
	if err := holder.unlock(bg); err != nil {
		fail("holder release: %v", err)
	}
	for done.Load() < int64(w) {
		time.Sleep(5 * time.Millisecond)
	}
	cpu := cpuTime() - cpu0
	wall := max(time.Duration(lastAcquire.Load()-t0), time.Microsecond)
	s.close()
	r := result(c, lib, int(handoffs.Load()), wall, cpu, lat)
	r.MaxHolders, r.Limit, r.Violations = int(h.max.Load()), 1, h.violations.Load()
	r.Threads, r.QueueS, r.WatchesSeen = int(threads), round3(queue.Seconds()), watches
	return r
}

// awaitWatches waits until wchp shows at least want watched nodes under
// path (every waiter's predecessor watched; gocurator's waiters mark their
// own nodes too) and returns how many it saw; -1 when
// the server does not answer wchp (not whitelisted), in which case the
// nodes alone were waited for.
func awaitWatches(connect, path string, want int) int {
	deadline := time.Now().Add(time.Minute)
	last := -1
	for {
		n, err := watchesUnder(connect, path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "note: wchp: %v; releasing once the nodes exist\n", err)
			return -1
		}
		if n != last {
			last = n
			progress.Add(1)
		}
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}
