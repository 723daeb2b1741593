package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report is everything a run produced; --json writes it.
type report struct {
	Settings    map[string]any    `json:"settings"`
	Environment map[string]string `json:"environment"`
	Unavailable map[string]string `json:"unavailable,omitempty"` // peer -> why, and the install command
	Results     []*Result         `json:"results"`               // every peer process, in run order
	Table       []row             `json:"table"`
	Violations  int               `json:"violations"` // runs that broke mutual exclusion or a bound
	Failures    int               `json:"failures"`   // other runs without a figure
}

// errInterrupted: the harness's context ended (a signal); the running peer
// was killed and the deferred clean-up ran.
var errInterrupted = errors.New("interrupted")

// harness runs the benchmark: one server, every job of plan() once per
// round for each of its peers (peers in a different order each round),
// each in a process of its own; then the table. When ctx ends it kills
// the running peer and returns errInterrupted, after its deferred
// clean-up: the Java peer's classes, the local server and its data, the
// run's tree on a --connect server.
func harness(ctx context.Context, c *config, stdout, stderr io.Writer) (*report, error) {
	t0 := time.Now()
	rep := &report{Unavailable: map[string]string{}, Settings: map[string]any{
		"mode": c.mode, "rounds": c.rounds, "peers": c.peers, "workloads": c.workloads,
		"k": c.ks, "w": c.ws, "w_go": c.wsGo, "n": c.n, "ops": c.ops, "warmup": c.warmup, "warmup_n": c.warmupN, "warmup_time_ms": c.warmupTime.Milliseconds(),
		"hold_us": c.hold.Microseconds(), "check": c.check, "check_hold_us": c.checkHold.Microseconds(), "server_warmup": c.serverWarmup, "java_opts": c.javaOpts,
		"session_timeout_ms": c.session.Milliseconds(), "stall_ms": c.stall.Milliseconds(),
		"ensemble": c.ensemble, "server_jvm": c.serverJVM, "latency_us": c.latency.Microseconds(), "off": c.off,
		"load_tree": c.loadTree, "lag_tree": c.lagTree, "lag_rate": c.lagRate, "lag_time_ms": c.lagTime.Milliseconds(),
		"instances": c.instances, "disc_rate": c.discRate, "call_time_ms": c.callTime.Milliseconds(),
	}}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	s := &spawner{c: c, self: self}
	if slices.Contains(c.peers, "curator") {
		fmt.Fprintln(stderr, "# compiling the curator peer (javac)")
		s.curator, err = buildCurator(ctx)
		if s.curator != nil {
			defer s.curator.remove() // even when interrupted right after javac
		}
		switch {
		case ctx.Err() != nil:
			return nil, errInterrupted
		case err != nil:
			rep.Unavailable["curator"] = err.Error()
			fmt.Fprintf(stderr, "# curator peer UNAVAILABLE: %v\n", err)
		}
	}
	connect, serverDesc, stop, err := startServer(c.connect, c.ensemble, c.serverJVM)
	if err != nil {
		return nil, err
	}
	defer stop()
	if c.latency > 0 {
		line, through, err := startLatency(connect, c.latency)
		if err != nil {
			return nil, err
		}
		defer line.Close()
		connect, serverDesc = through, fmt.Sprintf("%s; through a relay adding %v each way (--latency)", serverDesc, c.latency)
	}
	if ctx.Err() != nil {
		return nil, errInterrupted
	}
	if err := checkChroot(ctx, connect, c.session); ctx.Err() != nil {
		return nil, errInterrupted
	} else if err != nil {
		return nil, err
	}
	s.connect = connect
	root := fmt.Sprintf("/gocurator-bench-%d-%d", time.Now().UnixMilli(), os.Getpid())
	if c.connect != "" {
		defer func() {
			ctx, cancel := context.WithTimeout(bg, time.Minute)
			defer cancel()
			if err := deleteTree(ctx, connect, root, c.session); err != nil {
				fmt.Fprintf(stderr, "# cleaning up %s: %v\n", root, err)
			}
		}()
	}
	rep.Environment = environment(c, s, serverDesc)
	for _, k := range []string{"server", "zookeeper", "cpus", "go", "gozk", "curator"} {
		if v := rep.Environment[k]; v != "" {
			fmt.Fprintf(stderr, "# %s: %s\n", k, v)
		}
	}

	jobs := plan(c)
	if usesKazoo(jobs) {
		s.kazoo, err = buildKazoo(ctx)
		if s.kazoo != nil {
			defer s.kazoo.remove()
		}
		switch {
		case ctx.Err() != nil:
			return nil, errInterrupted
		case err != nil:
			rep.Unavailable["kazoo"] = err.Error()
			fmt.Fprintf(stderr, "# kazoo peer UNAVAILABLE: %v\n", err)
		default:
			rep.Environment["kazoo"] = s.kazoo.impl
			fmt.Fprintf(stderr, "# kazoo: %s\n", s.kazoo.impl)
		}
	}
	closeCache, err := s.prepareCache(ctx, jobs, root, stderr)
	if ctx.Err() != nil {
		return nil, errInterrupted
	} else if err != nil {
		return nil, err
	}
	defer closeCache()
	closeDisc, err := s.prepareDiscovery(ctx, jobs, root, stderr)
	if ctx.Err() != nil {
		return nil, errInterrupted
	} else if err != nil {
		return nil, err
	}
	defer closeDisc()
	if err := warmServer(ctx, c, s, jobs, rep, root, stderr); err != nil {
		return nil, err
	}
	for round := 1; round <= c.rounds; round++ {
		for _, j := range jobs {
			var peers []string
			for _, p := range j.peers {
				if rep.Unavailable[p] == "" {
					peers = append(peers, p)
				}
			}
			for i := range peers { // a different order each round
				p := peers[(i+round-1)%len(peers)]
				path := fmt.Sprintf("%s/r%d-%s-%s-%d", root, round, j.workload, p, j.clients)
				if j.variant != "" {
					path += "-" + j.variant // the queue workload's variants: one queue each
				}
				r := s.run(ctx, p, j, round, path, size{ops: c.ops, n: c.n, warmup: warmupOf(c, j), check: c.check})
				if ctx.Err() != nil {
					return nil, errInterrupted
				}
				if p == "curator" && s.curator != nil && r.Ops > 0 {
					r.Impl = s.curator.impl
				}
				if p == "kazoo" && s.kazoo != nil && r.Ops > 0 {
					r.Impl = s.kazoo.impl
				}
				rep.Results = append(rep.Results, r)
				logResult(stderr, c.rounds, r)
			}
		}
	}
	for _, r := range rep.Results {
		switch {
		case r.Violations > 0 || r.Exit == exitViolation:
			rep.Violations++
		case r.failed():
			rep.Failures++
		}
	}
	rep.Table = rows(c, jobs, rep.Results, rep.Unavailable)
	rep.Environment["wall_time"] = time.Since(t0).Round(time.Second).String()
	rep.Environment["loadavg_end"] = loadavg()

	fmt.Fprintf(stdout, "\nmedian of %d rounds (spread = (max-min)/median); %s; ZooKeeper %s, %s\n",
		c.rounds, c.mode, rep.Environment["zookeeper"], serverDesc)
	fmt.Fprintf(stdout, "%s CPUs, load average %s at the start, %s at the end (other work on the machine shows there); %s\n",
		rep.Environment["cpus"], rep.Environment["loadavg_start"], rep.Environment["loadavg_end"], rep.Environment["wall_time"])
	printTable(stdout, c.peers, rep.Table)
	fmt.Fprint(stdout, legend(c, rep, jobs))
	if c.jsonFile != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(c.jsonFile, append(b, '\n'), 0o644)
		}
		if err != nil {
			return rep, fmt.Errorf("--json: %w", err)
		}
	}
	return rep, nil
}

// warmupOf is the least number of warm-up acquisitions of a job's runs.
func warmupOf(c *config, j job) int {
	if j.workload == "uncontended" {
		return c.warmupN
	}
	return c.warmup
}

func environment(c *config, s *spawner, server string) map[string]string {
	e := map[string]string{
		"date": time.Now().UTC().Format(time.RFC3339), "cpus": fmt.Sprint(runtime.NumCPU()),
		"go": runtime.Version(), "server": server, "zookeeper": serverVersion(s.connect),
		"gocurator": gocuratorLib{}.impl(), "gozk": gozkLib{}.impl(), "loadavg_start": loadavg(),
	}
	if s.curator != nil {
		e["curator"] = s.curator.impl + ", JVM options: " + orDefault(c.javaOpts, "(none)")
	}
	return e
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func logResult(w io.Writer, rounds int, r *Result) {
	what := fmt.Sprintf("# round %d/%d %-11s %5d %-9s", r.Round, rounds, r.Workload, r.Clients, r.Peer)
	if r.Variant != "" {
		what += " (vs " + r.Variant + ")"
	}
	switch {
	case r.failed() || r.Violations > 0:
		fmt.Fprintf(w, "%s FAILED in %.1fs: %s\n", what, r.ProcessS, r.Error)
		return
	case r.Workload == "cacheload":
		fmt.Fprintf(w, "%s %d nodes in %.0f ms  %.0f MB peak RSS (%.0f MB before)  (%.1fs)\n",
			what, r.Ops, r.WallS*1000, float64(r.VmHWMKB)/1024, float64(r.BaseKB)/1024, r.ProcessS)
		return
	case r.Workload == "cachelag":
		fmt.Fprintf(w, "%s %d events of %d changes (%.0f/s)  lag p50 %.2f ms  p99 %.2f ms  %.0f MB  (%.1fs)\n",
			what, r.Ops, r.Changes, r.ChangesPerS, r.P50Ms, r.P99Ms, float64(r.VmHWMKB)/1024, r.ProcessS)
		return
	case isDiscoveryWorkload(r.Workload):
		fmt.Fprintf(w, "%s %s\n", what, discoveryLog(r))
		return
	}
	fmt.Fprintf(w, "%s %9.1f/s  p50 %.2f ms  %.3f CPU ms/acq  %.0f MB  (%.1fs; warm-up %d in %.1fs)\n",
		what, r.OpsPerS, r.P50Ms, r.CPUMsPerOp, float64(r.VmHWMKB)/1024, r.ProcessS, r.WarmupOps, r.WarmupS)
}

// legend says how to read the table, and what went wrong.
func legend(c *config, rep *report, jobs []job) string {
	s := "\nratios: gocurator's median over the peer's; for /s rows above 1 means gocurator is faster, for MB and CPU rows below 1 means it uses less, for ms rows below 1 means it takes less time.\n"
	s += "contended, semaphore (3 leases), rwlock (every 10th acquisition a write): K sessions, each its own recipe object, " +
		fmt.Sprintf("%d acquisitions in total; processes: K processes of one session each on one mutex, the same acquisitions shared out, their timed parts started together, the rate over the longest and the CPU of all; uncontended: %d acquire+release pairs; waiters: W contenders on one session; cpu: process CPU (user+system) over the timed part / acquisitions.\n", c.ops, c.n)
	if slices.Contains(c.workloads, "atomic") {
		s += fmt.Sprintf("atomic: K sessions, each its own counter object on one counter (gocurator's atomic.Long, Curator's DistributedAtomicLong; go-zookeeper has none), %d increments in total, both with a bounded exponential backoff of 1-50 ms and 29 retries between conflicts; the counter is checked exact after (issue 42's target: gocurator at least 1.5x Curator).\n", c.ops)
	}
	if slices.Contains(c.workloads, "queue") {
		s += fmt.Sprintf("queue: K producer and K consumer sessions on one queue (gocurator's Queue, Curator's DistributedQueue with putInBackground off, kazoo's Queue or LockingQueue; go-zookeeper has none), %d items of %d bytes put as fast as they go; lockpath: with a lock path (kazoo: LockingQueue), at least once; nolock: without, at most once; items/s from the first put to the take completing the set, puts/s over the producers' time, ms item p50 from put to take; every item must be taken exactly once and the queue left empty (issue 42's target: gocurator at least 1.5x Curator).\n", c.ops, queueItemSize)
	}
	s += fmt.Sprintf("warm-up: every run first makes, unreported, at least %d acquisitions (uncontended: %d pairs) of its shape for at least %v, the same for every peer (the JVM compiles its hot code late).\n",
		c.warmup, c.warmupN, c.warmupTime)
	if c.serverWarmup > 0 {
		s += fmt.Sprintf("server warm-up: before round 1, every job but the waiters', cachelag's and discoverylag's ran once per peer, unreported (its warm-up, then %d acquisitions), so that no round-1 figure pays for the server's JIT.\n", c.serverWarmup)
	}
	if c.latency > 0 {
		s += fmt.Sprintf("latency: every peer reaches the server through a relay that delivers each chunk of bytes %v after reading it, both ways (a round trip costs %v more than on loopback; bytes in flight together wait once, as on a wire).\n", c.latency, 2*c.latency)
	}
	if c.check > 0 {
		s += fmt.Sprintf("mutual exclusion: every run but uncontended ends with a checking pass, not timed: %d acquisitions (waiters: min(W, %d) waiters) each holding %v, the holder counts checked throughout; a violation there or in the timed part fails the run (exit status 3).\n",
			c.check, c.check, checkHold(c))
	} else {
		s += "mutual exclusion: NOT checked (--check 0): the timed part's holder counts alone, at --hold 0, miss two holders at once.\n"
	}
	s += cacheLegend(c, jobs)
	s += discoveryLegend(c, jobs)
	s += targets(rep.Table)
	for p, why := range rep.Unavailable {
		s += fmt.Sprintf("%s: UNAVAILABLE: %s\n", p, why)
	}
	for _, r := range rep.Results {
		if r.failed() || r.Violations > 0 {
			s += fmt.Sprintf("FAILED: round %d %s %s %d: %s\n", r.Round, r.Peer, r.Workload, r.Clients, r.Error)
		}
	}
	return s
}

// loadavg is the 1-minute load average (/proc/loadavg), "?" if unknown.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// warmServer makes the server (a JVM: the first run of each request
// pattern would pay its JIT) serve every request pattern of the run before
// anything is measured: each job but the waiters' (the same requests, at
// length, with their own warm-up) once per peer, with its warm-up
// (--warmup-time) and then --server-warmup acquisitions, not reported.
// Without it, the peer that runs first in round 1 (gocurator: the peers
// rotate from there) paid for the server's compiling: at 4 contended
// sessions, round 1's ratio to go-zookeeper was the lowest of the three in
// both full runs of stop 32 (0.93x and 0.77x, against 1.07x-1.19x and
// 0.94x-1.02x after), and 0.54x as the first job of a run of that workload
// alone; with it, 1.15x (issue 16).
func warmServer(ctx context.Context, c *config, s *spawner, jobs []job, rep *report, root string, stderr io.Writer) error {
	if c.serverWarmup <= 0 {
		return nil
	}
	ops := c.serverWarmup
	fmt.Fprintf(stderr, "# server warm-up: every job but the waiters', cachelag's and discoverylag's once per peer, its warm-up and %d acquisitions each, not reported\n", ops)
	for _, j := range jobs {
		if j.workload == "waiters" || j.workload == "cachelag" || j.workload == discoveryLag { // they warm up at length
			continue
		}
		for _, p := range j.peers {
			if rep.Unavailable[p] != "" {
				continue
			}
			path := fmt.Sprintf("%s/warm-%s-%s-%d", root, j.workload, p, j.clients)
			if j.variant != "" {
				path += "-" + j.variant
			}
			r := s.run(ctx, p, j, 0, path, size{ops: ops, n: ops})
			if ctx.Err() != nil {
				return errInterrupted
			}
			if r.failed() {
				return fmt.Errorf("server warm-up (%s, %s, K=%d) failed: %s", p, j.workload, j.clients, r.Error)
			}
		}
	}
	return nil
}
