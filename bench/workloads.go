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
// (3 leases) and rwlock (every 10th acquisition a write). Each first warms
// up: acquisitions of the same shape on the same sessions on another path,
// at least --warmup of them and for at least --warmup-time (the JVM of the
// curator peer compiles its hot code only after thousands of calls; every
// peer warms up alike); then the timed part. CPU is measured around the
// timed part only.
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

// connectWait is the longest a peer waits for a session (the stall
// guard's --stall is well over it, config.go).
const connectWait = 30 * time.Second

func openSessions(c *config, lib library, k int) []session {
	ss := make([]session, k)
	for i := range ss {
		ctx, cancel := context.WithTimeout(bg, connectWait)
		ss[i] = must(lib.connect(ctx, c.connect, c.session))
		cancel()
		progress.Add(1)
	}
	return ss
}

// holders counts who holds right now and checks it against the limit.
type holders struct {
	cur        *atomic.Int32 // own, or shared with other processes (processes.go)
	own        atomic.Int32
	max        atomic.Int32
	limit      int32
	violations atomic.Int64
}

// newHolders counts this process's holders against limit.
func newHolders(limit int) *holders {
	h := &holders{limit: int32(limit)}
	h.cur = &h.own
	return h
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

// partHolders are the holder counts of each part of a run (slotWarm,
// slotTimed, slotCheck): this process's own, or those the processes of a
// processes job share (--shared), one per part, since the processes do
// not pass from part to part together.
func partHolders(c *config, limit int) [sharedSlots]*holders {
	var hs [sharedSlots]*holders
	var shared *[sharedSlots]atomic.Int32
	if c.shared != "" {
		shared = sharedCounts(c.shared)
	}
	for i := range hs {
		hs[i] = newHolders(limit)
		if shared != nil {
			hs[i].cur = &shared[i]
		}
	}
	return hs
}

// checkHold is how long each acquisition of the checking pass holds.
func checkHold(c *config) time.Duration { return max(c.checkHold, c.hold) }

// timed runs ops acquisitions over the workers, one goroutine each,
// started together, and more until at least minTime has passed (the
// warm-up; 0 for a timed part): body(t, i) makes acquisition i on worker t
// and returns how long the acquisition took.
func timed(workers, ops int, minTime time.Duration, body func(t, i int) (time.Duration, error)) timing {
	lat := make([]time.Duration, ops)
	var next, made atomic.Int64
	var ready, done sync.WaitGroup
	var t0 time.Time // set before the gate opens
	gate := make(chan struct{})
	for t := range workers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			for i := int(next.Add(1) - 1); i < ops || minTime > 0 && time.Since(t0) < minTime; i = int(next.Add(1) - 1) {
				d, err := body(t, i)
				if err != nil {
					fail("worker %d, acquisition %d: %v", t, i, err)
				}
				if i < ops {
					lat[i] = d
				}
				made.Add(1)
				progress.Add(1)
			}
		}()
	}
	ready.Wait()
	cpu0 := cpuTime()
	t0 = time.Now()
	close(gate)
	done.Wait()
	return timing{wall: time.Since(t0), cpu: cpuTime() - cpu0, lat: lat, made: int(made.Load())}
}

// timing is what timed measured: the wall and CPU time, the latencies of
// the first ops acquisitions, and how many were made.
type timing struct {
	wall, cpu time.Duration
	lat       []time.Duration
	made      int
}

// warmedUp notes the warm-up in a result.
func (r *Result) warmedUp(t timing) *Result {
	r.WarmupOps, r.WarmupS = t.made, round3(t.wall.Seconds())
	return r
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
	hs := partHolders(c, limit)
	pair := c.workload == "uncontended" // its figure is the acquire+release pair
	run := func(part int, path string, ops int, minTime, holdFor time.Duration, what string) timing {
		h := hs[part]
		acq := make([]func() (func() error, error), k)
		for t, s := range ss {
			acq[t] = must(newAcquirer(s, path))
		}
		return timed(k, ops, minTime, func(t, _ int) (time.Duration, error) {
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
	warm := run(slotWarm, c.root+"/warm", c.warmup, c.warmupTime, c.hold, c.workload)
	waitGate(c.gate) // a process of a processes job: they start together
	t := run(slotTimed, c.root+"/lock", ops, 0, c.hold, c.workload)
	r := result(c, lib, ops, t.wall, t.cpu, t.lat).warmedUp(warm)
	// One worker never overlaps itself: uncontended has nothing to check,
	// unless other processes contend (--shared).
	if (k > 1 || c.shared != "") && c.check > 0 {
		run(slotCheck, c.root+"/check", c.check, 0, checkHold(c), c.workload+" (checking pass)")
		r.Checked = c.check
	}
	for _, s := range ss {
		s.close()
	}
	r.Limit = limit
	for _, h := range hs {
		r.MaxHolders = max(r.MaxHolders, int(h.max.Load()))
		r.Violations += h.violations.Load()
	}
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
