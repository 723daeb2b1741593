package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The cache workloads (issue 40): gocurator's Cache (recipes/cache, the
// whole subtree) beside Curator 5.4's CuratorCache and TreeCache (the
// job's variant; curator/CacheWorkloads.java). go-zookeeper has no cache:
// n/a. Each peer process has one session and one cache.
//
// cacheload: the harness makes one tree of --load-tree once, not timed
// (10x10x100: 10 nodes under the root, 10 under each, 100 under each of
// those: 10,110 nodes and the root, 8 bytes of data each); each peer
// process connects, then starts a cache on it. The figures: the time from
// the start call to the initialized event at the cache's listener (every
// node's created event delivered before it, counted: a cache that misses
// a node fails the run), and the process's peak RSS (VmHWM), with its RSS
// before the start as a baseline. No warm-up: a cache's first load is at a
// service's start, in a fresh process, the JVM's compiling included.
//
// cachelag: the harness makes a tree of --lag-tree once (10x30: 300
// leaves) and a node "end" under its root. Each peer process loads it with
// a cache and says it is ready (a file in --gate); then the harness's
// writer, one session of the harness's for every peer, sets leaves at
// --lag-rate, for --warmup-time (not reported) and then --lag-time, each
// leaf picked at random in a sequence that is the same for every run, its
// data the send time; then it sets "end" to "end CHANGES FROM" (the timed
// part's changes, the send time of its first). The peer records, for each
// created or changed event of a leaf, its arrival minus the send time in
// its data; after the end marker it waits until its cache holds the tree
// as the server has it (read once: the writer is done), and reports the
// lag's p50 and p99 over the events of the timed part's changes, and how
// many events it had for how many changes: a cache may coalesce a node's
// changes (skip intermediate states, never the last), which is reported,
// not failed.
//
// The send and arrival times are CLOCK_MONOTONIC (monoNanos), one clock
// for every process of the machine (the JVM's System.nanoTime on Linux),
// not moved by NTP steps; writer and peers run on one machine.

// endNode is cachelag's end marker, under the tree's root.
const endNode = "end"

// convergeWait is the longest a cachelag peer waits, after the end marker,
// for its cache to equal the tree (under half the stall guard's least).
const convergeWait = 30 * time.Second

// parseShape reads a tree's shape: its fan-out at each level, "10x10x100".
func parseShape(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, "x") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("tree shape %q: want fan-outs by level, such as 10x10x100", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// treePaths lists the nodes of a tree of shape under root, parents before
// their children, the root first; leaves are those of the last level.
func treePaths(root string, shape []int) (all, leaves []string) {
	all = []string{root}
	level := []string{root}
	for d, n := range shape {
		var next []string
		for _, p := range level {
			for i := range n {
				next = append(next, fmt.Sprintf("%s/%c%d", p, 'a'+d, i))
			}
		}
		all = append(all, next...)
		level = next
	}
	return all, level
}

// monoNanos is CLOCK_MONOTONIC in ns: the same clock in every process of
// the machine (Go's own monotonic reading counts from the process's start).
func monoNanos() int64 {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		fail("clock_gettime: %v", e)
	}
	return ts.Nano()
}

// cacheOf is the cache side of a peer's one session.
func cacheOf(c *config, lib library) (session, cacheSession) {
	s := openSessions(c, lib, 1)[0]
	cs, ok := s.(cacheSession)
	if !ok {
		fail("%s has no cache", c.peer)
	}
	return s, cs
}

// cacheLoadWL is cacheload's peer process.
func cacheLoadWL(c *config, lib library) *Result {
	shape := must(parseShape(c.tree))
	all, _ := treePaths(c.root, shape)
	s, cs := cacheOf(c, lib)
	var created atomic.Int64
	initialized := make(chan struct{})
	var once sync.Once
	base := procStatus("VmRSS")
	cpu0 := cpuTime()
	t0 := time.Now()
	ch := must(cs.cache(c.root, func(e cacheEvent) {
		switch e.kind {
		case cacheCreated:
			created.Add(1)
			progress.Add(1)
		case cacheInitialized:
			once.Do(func() { close(initialized) })
		}
	}))
	if err := ch.start(bg); err != nil {
		fail("starting the cache: %v", err)
	}
	<-initialized
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	n := int(created.Load())
	r := &Result{Peer: c.peer, Impl: lib.impl(), Workload: c.workload, Clients: c.clients, Variant: c.variant,
		Ops: n, WallS: round3(wall.Seconds()), OpsPerS: round3(float64(n) / wall.Seconds()),
		CPUMsPerOp: round3(float64(cpu) / 1e6 / float64(max(n, 1))),
		VmHWMKB:    procStatus("VmHWM"), BaseKB: base}
	ch.close()
	s.close()
	if n != len(all) {
		fail("the cache told %d nodes created before it was initialized, the tree has %d", n, len(all))
	}
	return r
}

// lagSample is one event of cachelag: the send time in its data, its lag.
type lagSample struct{ sent, lag int64 }

// cacheLagWL is cachelag's peer process.
func cacheLagWL(c *config, lib library) *Result {
	s, cs := cacheOf(c, lib)
	end := c.root + "/" + endNode
	var mu sync.Mutex
	samples := make([]lagSample, 0, 1<<14)
	var live, stopped atomic.Bool // from the initialized event on; until converged
	initialized := make(chan struct{})
	ended := make(chan string, 1)
	ch := must(cs.cache(c.root, func(e cacheEvent) {
		now := monoNanos()
		switch {
		case e.kind == cacheInitialized:
			if !live.Swap(true) {
				close(initialized)
			}
		case !live.Load() || stopped.Load() || e.kind != cacheCreated && e.kind != cacheChanged:
		case e.path == end:
			if bytes.HasPrefix(e.data, []byte("end ")) {
				select {
				case ended <- string(e.data):
				default:
				}
			}
		default:
			sent, err := strconv.ParseInt(string(e.data), 10, 64)
			if err != nil {
				return // an inner node
			}
			mu.Lock()
			samples = append(samples, lagSample{sent, now - sent})
			mu.Unlock()
			progress.Add(1)
		}
	}))
	if err := ch.start(bg); err != nil {
		fail("starting the cache: %v", err)
	}
	<-initialized
	signalReady(c.gate)
	var changes int
	var from int64
	if _, err := fmt.Sscanf(<-ended, "end %d %d", &changes, &from); err != nil {
		fail("end marker: %v", err)
	}
	converge(c, cs, ch)
	stopped.Store(true)
	mu.Lock()
	lat := timedLags(samples, from)
	mu.Unlock()
	p50, p99 := latencies(lat)
	r := &Result{Peer: c.peer, Impl: lib.impl(), Workload: c.workload, Clients: c.clients, Variant: c.variant,
		Ops: len(lat), P50Ms: p50, P99Ms: p99, Changes: changes, VmHWMKB: procStatus("VmHWM")}
	ch.close()
	s.close()
	return r
}

// signalReady tells the harness's writer that this peer is ready: a file
// in the gate directory (waitReady).
func signalReady(gate string) {
	if err := os.WriteFile(filepath.Join(gate, fmt.Sprintf("%s%d", gateReady, os.Getpid())), nil, 0o600); err != nil {
		fail("ready file: %v", err)
	}
}

// timedLags are the lags of the samples of the changes sent from from on
// (the timed part); a negative one fails the run.
func timedLags(samples []lagSample, from int64) []time.Duration {
	var lat []time.Duration
	for _, x := range samples {
		if x.lag < 0 {
			fail("an event %v before its change was sent: the clocks differ", time.Duration(-x.lag))
		}
		if x.sent >= from {
			lat = append(lat, time.Duration(x.lag))
		}
	}
	return lat
}

// converge waits until the cache holds every node of the tree at c.root
// with the server's data (read once: the writer is done), or fails the
// run past convergeWait.
func converge(c *config, cs cacheSession, ch treeCache) {
	want := map[string][]byte{}
	var walk func(p string)
	walk = func(p string) {
		want[p] = must(cs.get(bg, p))
		for _, k := range must(cs.list(bg, p)) {
			walk(p + "/" + k)
		}
	}
	walk(c.root)
	deadline := time.Now().Add(convergeWait)
	for {
		differ := ""
		for p, d := range want {
			if got, ok := ch.data(p); !ok || !bytes.Equal(got, d) {
				differ = p
				break
			}
		}
		if differ == "" {
			return
		}
		if time.Now().After(deadline) {
			fail("the cache still differs from the tree %v after the last change, at %s", convergeWait, differ)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cacheTrees are the trees of the cache workloads, made once per run by
// the harness (prepareCache), and cachelag's writer.
type cacheTrees struct {
	load, lag string // their roots ("" if not needed)
	lagLeaves []string
	writer    *harnessClient
}

// prepareCache makes the trees the jobs' cache workloads need, not timed,
// and opens cachelag's writer; close closes it.
func (s *spawner) prepareCache(ctx context.Context, jobs []job, root string, stderr io.Writer) (closeFn func(), err error) {
	need := map[string]bool{}
	for _, j := range jobs {
		need[j.workload] = true
	}
	if !need["cacheload"] && !need["cachelag"] {
		return func() {}, nil
	}
	h, err := openHarnessClient(ctx, s.connect, s.c.session)
	if err != nil {
		return nil, err
	}
	data := []byte("00000000")
	if need["cacheload"] {
		s.trees.load = root + "/cacheload-" + s.c.loadTree
		all, _ := treePaths(s.trees.load, must(parseShape(s.c.loadTree)))
		t0 := time.Now()
		if err := h.createAll(ctx, all, data); err != nil {
			h.close()
			return nil, fmt.Errorf("making cacheload's tree: %w", err)
		}
		fmt.Fprintf(stderr, "# cacheload's tree: %d nodes at %s, made in %.1fs\n", len(all), s.trees.load, time.Since(t0).Seconds())
	}
	if need["cachelag"] {
		s.trees.lag = root + "/cachelag-" + s.c.lagTree
		all, leaves := treePaths(s.trees.lag, must(parseShape(s.c.lagTree)))
		if err := h.createAll(ctx, append(all, s.trees.lag+"/"+endNode), data); err != nil {
			h.close()
			return nil, fmt.Errorf("making cachelag's tree: %w", err)
		}
		s.trees.lagLeaves = leaves
		fmt.Fprintf(stderr, "# cachelag's tree: %d nodes at %s, %d leaves changed\n", len(all)+1, s.trees.lag, len(leaves))
	}
	s.trees.writer = h
	return h.close, nil
}

// writeStats is what a paced writer (cachelag's, discoverylag's) did in one run.
type writeStats struct {
	changes int     // in the timed part
	perS    float64 // their rate
	err     error
}

// runCacheLag runs one cachelag peer process beside the writer.
func (s *spawner) runCacheLag(ctx context.Context, peer string, j job, round int, z size) *Result {
	if err := s.trees.writer.set(ctx, s.trees.lag+"/"+endNode, []byte("wait")); err != nil {
		return failedRun(peer, j, round, fmt.Errorf("writer: %w", err))
	}
	return s.runWithWriter(ctx, peer, j, round, s.trees.lag, z, s.write)
}

// failedRun is the result of a run that failed before or beside its peer
// process.
func failedRun(peer string, j job, round int, err error) *Result {
	return &Result{Peer: peer, Workload: j.workload, Clients: j.clients, Variant: j.variant, Round: round, Exit: -1, Error: err.Error()}
}

// runWithWriter runs one peer process (at root) beside a writer of the
// harness's, write, which starts once the peer says it is ready (a file in
// the gate directory, --gate) and ends early when its ctx does (the peer
// process ended). A writer that fails ends the peer, which would wait for
// ever, and fails the run.
func (s *spawner) runWithWriter(ctx context.Context, peer string, j job, round int, root string, z size,
	write func(ctx context.Context, gate string) writeStats) *Result {
	gate, err := os.MkdirTemp("", "gocurator-bench-"+j.workload+"-")
	if err != nil {
		return failedRun(peer, j, round, err)
	}
	defer os.RemoveAll(gate)
	wctx, cancel := context.WithCancel(ctx)
	pctx, kill := context.WithCancel(ctx)
	defer kill()
	var ws writeStats
	done := make(chan struct{})
	go func() {
		defer close(done)
		if ws = write(wctx, gate); ws.err != nil {
			kill()
		}
	}()
	r := s.spawn(pctx, peer, j, round, root, z, "--gate", gate)
	cancel()
	<-done
	if ws.err != nil {
		r.Exit, r.Error = -1, fmt.Sprintf("writer: %v", ws.err)
	}
	r.ChangesPerS = round3(ws.perS)
	return r
}

// write is cachelag's writer for one run (paced): each change sets a leaf
// picked at random in a sequence that is the same for every run, its data
// the send time; then the end marker.
func (s *spawner) write(ctx context.Context, gate string) writeStats {
	if !waitReady(ctx, gate) {
		return writeStats{}
	}
	_, total := slots(s.c.lagRate, s.c.warmupTime, s.c.lagTime)
	leaves := s.trees.lagLeaves
	rng := rand.New(rand.NewSource(40)) // the same changes in every run
	picks := make([]string, total)
	for i := range picks {
		picks[i] = leaves[rng.Intn(len(leaves))]
	}
	st, from := s.paced(ctx, s.c.lagRate, func(ctx context.Context, i int, sent int64) error {
		return s.trees.writer.set(ctx, picks[i], strconv.AppendInt(nil, sent, 10))
	})
	if ctx.Err() != nil || st.err != nil {
		return st
	}
	if err := s.trees.writer.set(ctx, s.trees.lag+"/"+endNode, fmt.Appendf(nil, "end %d %d", st.changes, from)); err != nil && ctx.Err() == nil {
		st.err = err
	}
	return st
}

// waitReady waits until the peer is ready (a file in gate), false if ctx
// ends first.
func waitReady(ctx context.Context, gate string) bool {
	t := time.NewTicker(gatePoll)
	defer t.Stop()
	for {
		entries, _ := os.ReadDir(gate)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), gateReady) {
				return true
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// slots is how many changes a paced writer makes at rate per second:
// warm for --warmup-time (not reported), total with the timed part's
// --lag-time (at least one).
func slots(rate int, warmup, timed time.Duration) (warm, total int) {
	warm = int(warmup.Seconds() * float64(rate))
	return warm, warm + max(int(timed.Seconds()*float64(rate)), 1)
}

// paced makes the changes of a writer: change i is op(ctx, i, sent), due
// at its slot of a schedule of rate per second for --warmup-time and then
// --lag-time (slots), sent by the first of writers goroutines free (calls
// on one session pipeline: a call slower than the interval delays no
// other), sent its send time (monoNanos, taken just before the call). The
// timed part is every change sent from its first slot on, from; the
// stats count those. It ends early when ctx does (then zero stats) or an
// op fails.
func (s *spawner) paced(ctx context.Context, rate int, op func(ctx context.Context, i int, sent int64) error) (st writeStats, from int64) {
	warm, total := slots(rate, s.c.warmupTime, s.c.lagTime)
	interval := time.Duration(float64(time.Second) / float64(rate))
	mono0 := monoNanos() // before t0: a change due at the timed part's first slot or later is sent at from or later
	t0 := time.Now()
	from = mono0 + int64(warm)*int64(interval) // the timed part's first slot
	var next, timed atomic.Int64
	var last atomic.Int64 // the latest end of a timed change, monoNanos
	var wg sync.WaitGroup
	var errOnce sync.Once
	var werr error
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < total && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if d := time.Until(t0.Add(time.Duration(i) * interval)); d > 0 {
					time.Sleep(d)
				}
				sent := monoNanos()
				if err := op(ctx, i, sent); err != nil {
					if ctx.Err() == nil {
						errOnce.Do(func() { werr = err })
						next.Store(int64(total)) // the others stop too
					}
					return
				}
				if sent >= from {
					timed.Add(1)
					for now, l := monoNanos(), last.Load(); now > l && !last.CompareAndSwap(l, now); l = last.Load() {
					}
				}
			}
		}()
	}
	wg.Wait()
	switch {
	case ctx.Err() != nil:
		return writeStats{}, from
	case werr != nil:
		return writeStats{err: werr}, from
	}
	n := int(timed.Load())
	return writeStats{changes: n, perS: float64(n) / (float64(last.Load()-from) / 1e9)}, from
}

// writers: the goroutines of a paced writer (a set waits for its reply,
// which on a loaded machine takes longer than the 1 ms between changes).
const writers = 8

// cacheLegend says how to read the cache workloads' rows, if any ran.
func cacheLegend(c *config, jobs []job) string {
	var load, lag bool
	for _, j := range jobs {
		load = load || j.workload == "cacheload"
		lag = lag || j.workload == "cachelag"
	}
	if !load && !lag {
		return ""
	}
	s := "caches: gocurator's Cache (recipes/cache) beside the curator peer's cache named in the row (vs CuratorCache: Curator 5's, on one persistent recursive watch; vs TreeCache: the classic one, standard watches as ours), gocurator's Cache in both rows (its runs interleaved with that one's); gozk: n/a, not applicable (go-zookeeper has no cache); one session and one cache per process.\n"
	if load {
		all, _ := treePaths("", must(parseShape(c.loadTree)))
		s += fmt.Sprintf("cacheload: a cache started on a tree of %s (%d nodes, made once by the harness), in a fresh process, no warm-up: the time from the start call to the initialized event at the listener (every node's created event before it), the process's peak RSS (VmHWM) and its growth over the RSS before the start.\n", c.loadTree, len(all))
	}
	if lag {
		_, leaves := treePaths("", must(parseShape(c.lagTree)))
		s += fmt.Sprintf("cachelag: the harness's writer (one session, the same for every peer) sets random leaves of a %s tree (%d leaves) at %d/s, %v unreported then %v, data the send time (CLOCK_MONOTONIC); the lag is each created/changed event's arrival at the listener minus that; %% changes seen = events / changes of the timed part (a cache may coalesce a node's changes: reported, not failed); each run ends once the cache equals the tree.\n",
			c.lagTree, len(leaves), c.lagRate, c.warmupTime, c.lagTime)
	}
	return s
}
