package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The Go peers' workloads (the Java peer has the same in curator/Bench.java):
// uncontended, contended (K sessions, OPS acquisitions in total), semaphore
// (3 leases) and rwlock (every 10th acquisition a write). Each first runs
// --warmup acquisitions of the same shape on the same sessions on another
// path, then the timed part; CPU is measured around the timed part only.
// Then, on a third path, the checking pass: --check acquisitions of the
// same shape, each holding --check-hold, not reported.
//
// Why a checking pass: the holder counts are raised only between an
// acquisition's return and its release call. At the published --hold 0
// that window is a few atomic operations, and a lock that admits two
// holders at once would overlap there almost never (a fake lock admitting
// two, with 300 µs round trips, gave 0 violations in 2,000 acquisitions at
// hold 0 and hundreds at 100 µs): the timed part alone cannot tell a
// broken lock from a working one. The checking pass holds long enough for
// any two holders at once to be seen together; the timed part keeps its
// counts too, and a violation in either fails the run.

var bg = context.Background()

// fail ends a peer process on an error: a worker that failed may hold a
// lock the others wait for, so there is nothing sensible left to measure.
func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(exitError)
}

func must[T any](v T, err error) T {
	if err != nil {
		fail("%v", err)
	}
	return v
}

func openSessions(c *config, lib library, k int) []session {
	ss := make([]session, k)
	for i := range ss {
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		ss[i] = must(lib.connect(ctx, c.connect, c.session))
		cancel()
	}
	return ss
}

// holders counts who holds right now and checks it against the limit.
type holders struct {
	cur, max   atomic.Int32
	limit      int32
	violations atomic.Int64
}

func (h *holders) enter(what string) {
	n := h.cur.Add(1)
	for m := h.max.Load(); n > m && !h.max.CompareAndSwap(m, n); m = h.max.Load() {
	}
	if n > h.limit {
		h.violations.Add(1)
		fmt.Fprintf(os.Stderr, "VIOLATION: %s: %d holders, limit %d\n", what, n, h.limit)
	}
}

func (h *holders) leave() { h.cur.Add(-1) }

// checkHold is how long each acquisition of the checking pass holds.
func checkHold(c *config) time.Duration { return max(c.checkHold, c.hold) }

// timed runs ops acquisitions over the workers, one goroutine each,
// started together: body(t, i) makes acquisition i on worker t and
// returns how long the acquisition took. It returns the wall time,
// the CPU time and the latencies.
func timed(workers, ops int, body func(t, i int) (time.Duration, error)) (wall, cpu time.Duration, lat []time.Duration) {
	lat = make([]time.Duration, ops)
	var next atomic.Int64
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for t := range workers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			for i := int(next.Add(1) - 1); i < ops; i = int(next.Add(1) - 1) {
				d, err := body(t, i)
				if err != nil {
					fail("worker %d, acquisition %d: %v", t, i, err)
				}
				lat[i] = d
				progress.Add(1)
			}
		}()
	}
	ready.Wait()
	cpu0, t0 := cpuTime(), time.Now()
	close(gate)
	done.Wait()
	return time.Since(t0), cpuTime() - cpu0, lat
}

func result(c *config, lib library, ops int, wall, cpu time.Duration, lat []time.Duration) *Result {
	p50, p99 := latencies(lat)
	return &Result{
		Peer: c.peer, Impl: lib.impl(), Workload: c.workload, Clients: c.clients, Ops: ops,
		WallS: round3(wall.Seconds()), OpsPerS: round3(float64(ops) / wall.Seconds()),
		P50Ms: p50, P99Ms: p99,
		CPUMsPerOp: round3(float64(cpu) / 1e6 / float64(max(ops, 1))),
		VmHWMKB:    procStatus("VmHWM"),
	}
}

// acquirer makes one worker's acquire function on path; an acquire
// returns the release.
type acquirer func(s session, path string) (func() (func() error, error), error)

// exclusive is uncontended, contended and semaphore: K workers, each on
// its own session with its own recipe object, at most limit holders.
func exclusive(c *config, lib library, k, ops, limit int, newAcquirer acquirer) *Result {
	ss := openSessions(c, lib, k)
	h := &holders{limit: int32(limit)}
	pair := c.workload == "uncontended" // its figure is the acquire+release pair
	run := func(path string, ops int, holdFor time.Duration, what string) (wall, cpu time.Duration, lat []time.Duration) {
		acq := make([]func() (func() error, error), k)
		for t, s := range ss {
			acq[t] = must(newAcquirer(s, path))
		}
		return timed(k, ops, func(t, _ int) (time.Duration, error) {
			s := time.Now()
			release, err := acq[t]()
			if err != nil {
				return 0, err
			}
			d := time.Since(s)
			h.enter(what)
			sleep(holdFor)
			h.leave()
			if err := release(); err != nil {
				return 0, fmt.Errorf("release: %w", err)
			}
			if pair {
				d = time.Since(s)
			}
			return d, nil
		})
	}
	run(c.root+"/warm", c.warmup, c.hold, c.workload)
	wall, cpu, lat := run(c.root+"/lock", ops, c.hold, c.workload)
	r := result(c, lib, ops, wall, cpu, lat)
	// One worker never overlaps itself: uncontended has nothing to check.
	if k > 1 && c.check > 0 {
		run(c.root+"/check", c.check, checkHold(c), c.workload+" (checking pass)")
		r.Checked = c.check
	}
	for _, s := range ss {
		s.close()
	}
	r.MaxHolders, r.Limit, r.Violations = int(h.max.Load()), limit, h.violations.Load()
	return r
}

// sleep is the time spent holding: --hold (default none) in the timed
// part, --check-hold in the checking pass.
func sleep(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}

func mutexAcquirer(s session, path string) (func() (func() error, error), error) {
	m, err := s.mutex(path)
	if err != nil {
		return nil, err
	}
	return func() (func() error, error) {
		if err := m.lock(bg); err != nil {
			return nil, err
		}
		return func() error { return m.unlock(bg) }, nil
	}, nil
}

func semaphoreAcquirer(s session, path string) (func() (func() error, error), error) {
	sem, err := s.semaphore(path, semaphoreLeases)
	if err != nil {
		return nil, err
	}
	return func() (func() error, error) {
		release, err := sem.acquire(bg)
		if err != nil {
			return nil, err
		}
		return func() error { return release(bg) }, nil
	}, nil
}

const semaphoreLeases = 3
