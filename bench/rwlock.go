package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// isWrite: every 10th acquisition of the run is a write (90% reads), the
// same acquisitions for every peer whatever the scheduling.
func isWrite(i int) bool { return i%10 == 0 }

// rwlockWL is the rwlock workload: K workers, each on its own session with
// its own read-write lock; a writer must be alone, a reader must see no
// writer.
func rwlockWL(c *config, lib library, k, ops int) *Result {
	ss := openSessions(c, lib, k)
	var readers, writers, maxReaders atomic.Int32
	var violations, writes atomic.Int64
	violation := func(format string, args ...any) {
		violations.Add(1)
		fmt.Fprintf(os.Stderr, "VIOLATION: rwlock: "+format+"\n", args...)
	}
	run := func(path string, ops int, minTime, holdFor time.Duration, what string) timing {
		rws := make([]rwLocker, k)
		for t, s := range ss {
			rws[t] = must(s.rwlock(path))
		}
		writes.Store(0)
		return timed(k, ops, minTime, func(t, i int) (time.Duration, error) {
			w := isWrite(i)
			half := rws[t].read()
			if w {
				half = rws[t].write()
			}
			s := time.Now()
			if err := half.lock(bg); err != nil {
				return 0, err
			}
			d := time.Since(s)
			if w {
				writes.Add(1)
				if n, r := writers.Add(1), readers.Load(); n > 1 || r > 0 {
					violation("%sa writer with %d writers and %d readers", what, n, r)
				}
				sleep(holdFor)
				writers.Add(-1)
			} else {
				n := readers.Add(1)
				for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
				}
				if w := writers.Load(); w > 0 {
					violation("%sa reader with %d writers", what, w)
				}
				sleep(holdFor)
				readers.Add(-1)
			}
			if err := half.unlock(bg); err != nil {
				return 0, fmt.Errorf("release: %w", err)
			}
			return d, nil
		})
	}
	warm := run(c.root+"/warm", c.warmup, c.warmupTime, c.hold, "")
	maxReaders.Store(0)
	t := run(c.root+"/lock", ops, 0, c.hold, "")
	r := result(c, lib, ops, t.wall, t.cpu, t.lat).warmedUp(warm)
	r.MaxHolders, r.Writes = int(maxReaders.Load()), int(writes.Load()) // no limit on readers
	if c.check > 0 {                                                    // the checking pass (workloads.go)
		run(c.root+"/check", c.check, 0, checkHold(c), "(checking pass) ")
		r.Checked = c.check
	}
	for _, s := range ss {
		s.close()
	}
	r.Violations = violations.Load()
	return r
}
