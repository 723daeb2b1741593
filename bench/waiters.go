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
// are set, everyone is parked or about to be) the holder releases and each
// waiter acquires and at once releases in turn. The figure is W handoffs
// over the time from the holder's release call to the last acquisition;
// the process's peak RSS (VmHWM) at the end of the timed part is the
// memory figure. Then the checking pass (workloads.go): the same with
// min(W, --check) waiters on another path, each holding --check-hold.
func waitersWL(c *config, lib library, w int) *Result {
	s := openSessions(c, lib, 1)[0]
	// The warm-up (workloads.go): waitersWarmers lock objects on the one
	// session take turns on another path, as waiters hand off.
	warm := make([]locker, waitersWarmers)
	for t := range warm {
		warm[t] = must(s.mutex(c.root + "/warm"))
	}
	warmed := timed(len(warm), c.warmup, c.warmupTime, func(t, _ int) (time.Duration, error) {
		if err := warm[t].lock(bg); err != nil {
			return 0, err
		}
		return 0, warm[t].unlock(bg)
	})
	h := newHolders(1)
	q := queue(c, s, c.root+"/lock", w, h, 0, "waiters", true)
	r := result(c, lib, q.handoffs, q.wall, q.cpu, q.lat).warmedUp(warmed)
	r.Threads, r.QueueS, r.WatchesSeen = q.threads, round3(q.queue.Seconds()), q.watches
	if n := min(w, c.check); n > 0 {
		queue(c, s, c.root+"/check", n, h, checkHold(c), "waiters (checking pass)", false)
		r.Checked = n
	}
	s.close()
	r.MaxHolders, r.Limit, r.Violations = int(h.max.Load()), 1, h.violations.Load()
	return r
}

// waitersWarmers: the lock objects of the waiters' warm-up.
const waitersWarmers = 4

// queued is what one queue of waiters measured.
type queued struct {
	handoffs  int
	wall, cpu time.Duration   // from the holder's release to the last acquisition
	lat       []time.Duration // from the previous release call to each acquisition
	queue     time.Duration   // until all nodes (and watches) were there
	threads   int
	watches   int
}

// queue runs one queue of w waiters on s behind a holder on path: each
// waiter, once it holds, is counted in h and holds for holdFor. With
// watches it also waits, before the release, for the waiters' watches
// (awaitWatches).
func queue(c *config, s session, path string, w int, h *holders, holdFor time.Duration, what string, watches bool) queued {
	holder := must(s.mutex(path))
	if err := holder.lock(bg); err != nil {
		fail("%s: holder: %v", what, err)
	}
	h.enter(what + " (holder)")
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) }
	var lastRelease, lastAcquire, handoffs, done atomic.Int64
	q := queued{lat: make([]time.Duration, w), watches: -1}
	q0 := time.Now()
	for i := range w {
		go func() {
			m := must(s.mutex(path))
			if err := m.lock(bg); err != nil {
				fail("%s: waiter %d: %v", what, i, err)
			}
			t := now()
			h.enter(what)
			q.lat[handoffs.Add(1)-1] = time.Duration(t - lastRelease.Load())
			lastAcquire.Store(t)
			sleep(holdFor)
			h.leave()
			lastRelease.Store(now())
			if err := m.unlock(bg); err != nil {
				fail("%s: waiter %d release: %v", what, i, err)
			}
			done.Add(1)
			progress.Add(1)
		}()
	}
	// Until every waiter is there: queued (its node with the holder's), or
	// already through, which no waiter may be while the holder holds (a
	// violation, counted).
	for last := -1; ; time.Sleep(20 * time.Millisecond) {
		n := must(s.children(bg, path))
		if n != last {
			last = n
			progress.Add(1)
		}
		if n+int(done.Load()) >= w+1 {
			break
		}
	}
	if watches {
		q.watches = awaitWatches(c, path, w)
	}
	q.queue = time.Since(q0)
	q.threads = int(procStatus("Threads"))

	cpu0 := cpuTime()
	t0 := now()
	lastRelease.Store(t0)
	h.leave()
	if err := holder.unlock(bg); err != nil {
		fail("%s: holder release: %v", what, err)
	}
	for done.Load() < int64(w) {
		time.Sleep(5 * time.Millisecond)
	}
	q.cpu = cpuTime() - cpu0
	q.wall = max(time.Duration(lastAcquire.Load()-t0), time.Microsecond)
	q.handoffs = int(handoffs.Load())
	return q
}

// watchWait is the longest the waiters wait for their watches (the
// stall guard's --stall is well over it, config.go).
const watchWait = 30 * time.Second

// awaitWatches waits until wchp shows at least want watched nodes under
// path (every waiter's predecessor watched; gocurator's waiters mark their
// own nodes too) and returns how many it saw; -1 when
// the server does not answer wchp (not whitelisted), in which case the
// nodes alone were waited for.
func awaitWatches(c *config, path string, want int) int {
	deadline := time.Now().Add(watchWait)
	last := -1
	for {
		n, err := watchesUnder(c.connect, path)
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
