// Command bench runs the lock-recipe workloads of ../shared/peers (the team's
// side-by-side benchmark of Curator, kazoo and go-zookeeper on one
// ZooKeeper server) against gocurator, with the same flags and the same one
// JSON line per workload, so that
//
//	EXTRA_PEERS="gocurator=$PWD/examples/bench/run.sh" ../shared/peers/run-all.sh full
//
// puts gocurator beside the others in one run on one server. Without
// --connect it starts a local ZooKeeper (testing/zktest) and stops it after.
//
// Workloads: uncontended, contended (K sessions), semaphore (3 leases),
// rwlock (90% reads), timeouts (K clients x M Lock with a --timeout-ms
// context deadline against a held lock), waiters (W goroutines, one session,
// one Mutex each). Exit status 3 on any exclusion violation, 1 on errors.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/testing/zktest"
)

var (
	connect    = flag.String("connect", "", "ZooKeeper connect string (default: start a local server)")
	nFlag      = flag.Int("n", 1000, "uncontended: acquire+release pairs")
	kFlag      = flag.Int("k", 4, "clients (sessions) for contended/semaphore/rwlock/timeouts")
	opsFlag    = flag.Int("ops", 1000, "contended/semaphore/rwlock: total acquisitions")
	mFlag      = flag.Int("m", 10, "timeouts: attempts per client")
	warmup     = flag.Int("warmup", 100, "warm-up acquisitions (not reported)")
	timeoutMs  = flag.Int("timeout-ms", 50, "timeouts: per-attempt deadline")
	sessionMs  = flag.Int("session-ms", 30000, "session timeout")
	rootFlag   = flag.String("root", "", "znode root (default /bench/gocurator-<ms>)")
	workloads  = flag.String("workloads", "uncontended,contended,semaphore,rwlock,timeouts", "comma-separated workloads (also: waiters)")
	stallMs    = flag.Int("stall-ms", 1000, "rwlock: an acquire slower than this is a stall; waiters: no-progress guard is max(10 s, 10 x stall-ms)")
	holdMs     = flag.Int("hold-ms", 0, "contended/semaphore/rwlock: time spent holding")
	wFlag      = flag.Int("w", 200, "waiters: contenders (goroutines) on one session")
	cpuProfile = flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")

	impl       = "gocurator"
	violations atomic.Int64
	errCount   atomic.Int64
)

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "[%s] fatal: %v\n", impl, err)
	os.Exit(1)
}

func newClient() *framework.Client {
	c, err := framework.New(*connect, framework.WithSessionTimeout(time.Duration(*sessionMs)*time.Millisecond))
	if err != nil {
		fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := c.BlockUntilConnected(ctx); err != nil {
		fatal(fmt.Errorf("no session with %s: %w", *connect, err))
	}
	return c
}

func newClients(n int) []*framework.Client {
	cs := make([]*framework.Client, n)
	for i := range cs {
		cs[i] = newClient()
	}
	return cs
}

func closeAll(cs []*framework.Client) {
	for _, c := range cs {
		c.Close()
	}
}

// runClients runs body on one goroutine per client, started together.
func runClients(cs []*framework.Client, body func(t int, c *framework.Client) error) time.Duration {
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for t, c := range cs {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			if err := body(t, c); err != nil {
				errCount.Add(1)
				fmt.Fprintf(os.Stderr, "[%s] client %d error: %v\n", impl, t, err)
			}
		}()
	}
	ready.Wait()
	t0 := time.Now()
	close(gate)
	done.Wait()
	return time.Since(t0)
}

func hold() {
	if *holdMs > 0 {
		time.Sleep(time.Duration(*holdMs) * time.Millisecond)
	}
}

func updateMax(m *atomic.Int32, v int32) {
	for p := m.Load(); v > p && !m.CompareAndSwap(p, v); p = m.Load() {
	}
}

func mutex(c *framework.Client, path string) *locks.Mutex {
	m, err := locks.NewMutex(c, path)
	if err != nil {
		fatal(err)
	}
	return m
}

var bg = context.Background()

func warm(root string) {
	c := newClient()
	m := mutex(c, root+"/warm-u")
	for i := 0; i < *warmup; i++ {
		if err := m.Lock(bg); err != nil {
			fatal(err)
		}
		if err := m.Unlock(bg); err != nil {
			fatal(err)
		}
	}
	c.Close()
	cs := newClients(min(max(*kFlag, 2), 4))
	var next atomic.Int64
	runClients(cs, func(_ int, c *framework.Client) error {
		m := mutex(c, root+"/warm-c")
		for next.Add(1) <= int64(*warmup) {
			if err := m.Lock(bg); err != nil {
				return err
			}
			if err := m.Unlock(bg); err != nil {
				return err
			}
		}
		return nil
	})
	closeAll(cs)
}

func uncontended(root string) {
	c := newClient()
	m := mutex(c, root+"/u")
	lat := make([]time.Duration, *nFlag)
	cpu0 := cpuTime()
	t0 := time.Now()
	for i := range lat {
		s := time.Now()
		if err := m.Lock(bg); err != nil {
			fatal(err)
		}
		if err := m.Unlock(bg); err != nil {
			fatal(err)
		}
		lat[i] = time.Since(s)
	}
	wall := time.Since(t0)
	cpu := cpuTime() - cpu0
	c.Close()
	emit("uncontended", 1, *nFlag, wall, lat, cpuField(cpu, *nFlag))
}

func contended(root string) {
	path := root + "/c"
	k, ops := *kFlag, *opsFlag
	cs := newClients(k)
	lat := make([]time.Duration, ops)
	per := make([]int, k)
	var next atomic.Int64
	var holders, maxHolders atomic.Int32
	cpu0 := cpuTime()
	wall := runClients(cs, func(t int, c *framework.Client) error {
		m := mutex(c, path)
		for {
			i := next.Add(1) - 1
			if i >= int64(ops) {
				return nil
			}
			s := time.Now()
			if err := m.Lock(bg); err != nil {
				return err
			}
			lat[i] = time.Since(s)
			h := holders.Add(1)
			updateMax(&maxHolders, h)
			if h > 1 {
				violations.Add(1)
				fmt.Fprintf(os.Stderr, "!!! [%s] mutual exclusion VIOLATED: holders=%d\n", impl, h)
			}
			hold()
			holders.Add(-1)
			if err := m.Unlock(bg); err != nil {
				return err
			}
			per[t]++
		}
	})
	cpu := cpuTime() - cpu0
	closeAll(cs)
	mn, mx := per[0], per[0]
	for _, v := range per {
		mn, mx = min(mn, v), max(mx, v)
	}
	emit("contended", k, ops, wall, lat,
		kv{"max_holders", maxHolders.Load()}, kv{"per_client_min", mn}, kv{"per_client_max", mx},
		kv{"hold_ms", *holdMs}, kv{"errors", errCount.Load()}, cpuField(cpu, ops))
}

func semaphoreWL(root string) {
	path := root + "/s"
	const maxLeases = 3
	k, ops := *kFlag, *opsFlag
	cs := newClients(k)
	lat := make([]time.Duration, ops)
	var next atomic.Int64
	var holders, maxHolders, bound atomic.Int32
	cpu0 := cpuTime()
	wall := runClients(cs, func(_ int, c *framework.Client) error {
		sem, err := semaphore.New(c, path, maxLeases)
		if err != nil {
			return err
		}
		for {
			i := next.Add(1) - 1
			if i >= int64(ops) {
				return nil
			}
			s := time.Now()
			l, err := sem.Acquire(bg)
			if err != nil {
				return err
			}
			lat[i] = time.Since(s)
			h := holders.Add(1)
			updateMax(&maxHolders, h)
			if h > maxLeases {
				bound.Add(1)
				violations.Add(1)
				fmt.Fprintf(os.Stderr, "!!! [%s] semaphore bound VIOLATED: holders=%d\n", impl, h)
			}
			hold()
			holders.Add(-1)
			if err := l.Release(bg); err != nil {
				return err
			}
		}
	})
	cpu := cpuTime() - cpu0
	closeAll(cs)
	emit("semaphore", k, ops, wall, lat,
		kv{"max_leases", maxLeases}, kv{"max_holders", maxHolders.Load()}, kv{"bound_violations", bound.Load()},
		kv{"hold_ms", *holdMs}, kv{"errors", errCount.Load()}, cpuField(cpu, ops))
	if maxHolders.Load() > maxLeases {
		fmt.Fprintf(os.Stderr, "!!! [%s] FAIL semaphore: max_holders=%d > max_leases=%d (%d times)\n", impl, maxHolders.Load(), maxLeases, bound.Load())
	}
}

func rwlock(root string) {
	path := root + "/rw"
	k, ops := *kFlag, *opsFlag
	cs := newClients(k)
	lat := make([]time.Duration, ops)
	isWrite := make([]bool, ops)
	for i := range lat {
		lat[i] = -1
	}
	var next atomic.Int64
	var readers, writers, maxReaders, stalls atomic.Int32
	var stop atomic.Bool
	cpu0 := cpuTime()
	wall := runClients(cs, func(t int, c *framework.Client) error {
		rw, err := locks.NewReadWriteLock(c, path)
		if err != nil {
			return err
		}
		rnd := rand.New(rand.NewPCG(uint64(1000+t), 0))
		for !stop.Load() {
			i := next.Add(1) - 1
			if i >= int64(ops) {
				return nil
			}
			w := rnd.IntN(10) == 0
			isWrite[i] = w
			var half curator.Locker = rw.Read()
			if w {
				half = rw.Write()
			}
			s := time.Now()
			sctx, cancel := context.WithTimeout(bg, time.Duration(*stallMs)*time.Millisecond)
			err := half.Lock(sctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				stalls.Add(1)
				stop.Store(true)
				return nil
			}
			if err != nil {
				return err
			}
			lat[i] = time.Since(s)
			if w {
				ww, rr := writers.Add(1), readers.Load()
				if ww > 1 || rr > 0 {
					violations.Add(1)
					fmt.Fprintf(os.Stderr, "!!! [%s] rwlock VIOLATED: writers=%d readers=%d\n", impl, ww, rr)
				}
				hold()
				writers.Add(-1)
			} else {
				rr := readers.Add(1)
				updateMax(&maxReaders, rr)
				if ww := writers.Load(); ww > 0 {
					violations.Add(1)
					fmt.Fprintf(os.Stderr, "!!! [%s] rwlock VIOLATED: reader with writers=%d\n", impl, ww)
				}
				hold()
				readers.Add(-1)
			}
			if err := half.Unlock(bg); err != nil {
				return err
			}
		}
		return nil
	})
	cpu := cpuTime() - cpu0
	closeAll(cs)
	var all, rs, ws []time.Duration
	for i, l := range lat {
		if l < 0 {
			continue
		}
		all = append(all, l)
		if isWrite[i] {
			ws = append(ws, l)
		} else {
			rs = append(rs, l)
		}
	}
	sortDur(rs)
	sortDur(ws)
	if stalls.Load() > 0 {
		fmt.Fprintf(os.Stderr, "!!! [%s] rwlock: %d acquire(s) stalled > %d ms; stopped after %d of %d ops\n", impl, stalls.Load(), *stallMs, len(all), ops)
	}
	emit("rwlock", k, len(all), wall, all,
		kv{"ops_requested", ops}, kv{"writes", len(ws)},
		kv{"read_p50_ms", r3(pct(rs, 50))}, kv{"write_p50_ms", r3(pct(ws, 50))}, kv{"write_p99_ms", r3(pct(ws, 99))},
		kv{"max_concurrent_readers", maxReaders.Load()}, kv{"stall_ms", *stallMs}, kv{"stalls", stalls.Load()},
		kv{"deadlock", stalls.Load() > 0}, kv{"hold_ms", *holdMs}, kv{"errors", errCount.Load()}, cpuField(cpu, len(all)))
}

// timeouts: K clients x M Lock with a --timeout-ms context deadline against
// a held lock, then the server's watch counts and leftover children, as the
// peers report them. No "timeout_mode" field: summarize.py reads its
// presence as "emulated by session close" (the go-zookeeper peer's case);
// ours is a real deadline on Lock, like Curator's acquire(time, unit).
func timeouts(root string) {
	path := root + "/t"
	k, m := *kFlag, *mFlag
	tmo := time.Duration(*timeoutMs) * time.Millisecond
	holder := newClient()
	hm := mutex(holder, path)
	if err := hm.Lock(bg); err != nil {
		fatal(err)
	}
	cs := newClients(k)
	time.Sleep(200 * time.Millisecond)
	wBefore := wchs()
	lwBefore, _, _ := lockWatches(nil, path)
	lat := make([]time.Duration, k*m)
	var timedOut, unexpected atomic.Int64
	wall := runClients(cs, func(t int, c *framework.Client) error {
		mu := mutex(c, path)
		for j := 0; j < m; j++ {
			ctx, cancel := context.WithTimeout(bg, tmo)
			s := time.Now()
			err := mu.Lock(ctx)
			lat[t*m+j] = time.Since(s)
			cancel()
			switch {
			case err == nil:
				unexpected.Add(1)
				mu.Unlock(bg)
			case errors.Is(err, context.DeadlineExceeded):
				timedOut.Add(1)
			default:
				return err
			}
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond)
	wAfterT := wchs()
	lwAfterT, lpAfterT, danglingAfterT := lockWatches(holder, path)
	chAfterT := children(holder, path)
	if err := hm.Unlock(bg); err != nil {
		fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	wAfterR := wchs()
	lwAfterR, _, _ := lockWatches(nil, path)
	chAfterR := children(holder, path)
	closeAll(cs)
	holder.Close()
	time.Sleep(200 * time.Millisecond)
	wAfterC := wchs()
	lwAfterC, _, _ := lockWatches(nil, path)
	fresh := newClient()
	chAfterC := children(fresh, path)
	fresh.Close()
	emit("timeouts", k, k*m, wall, lat,
		kv{"timeout_ms", *timeoutMs}, kv{"attempts_per_client", m},
		kv{"timed_out", timedOut.Load()}, kv{"acquired_unexpectedly", unexpected.Load()},
		kv{"wchs_before", wBefore}, kv{"wchs_after_timeouts", wAfterT},
		kv{"wchs_after_release", wAfterR}, kv{"wchs_after_close", wAfterC},
		kv{"lock_watches_before", lwBefore}, kv{"lock_watches_after_timeouts", lwAfterT},
		kv{"lock_watched_paths_after_timeouts", lpAfterT},
		kv{"dangling_watched_paths_after_timeouts", danglingAfterT},
		kv{"lock_watches_after_release", lwAfterR}, kv{"lock_watches_after_close", lwAfterC},
		kv{"children_after_timeouts", chAfterT}, kv{"children_after_release", chAfterR},
		kv{"children_after_close", chAfterC}, kv{"errors", errCount.Load()})
}

// waiters: W goroutines in ONE process on ONE client (session), one Mutex
// each; a holder Mutex on the same client takes the path; once W+1
// contender nodes exist and the W predecessor watches are registered, the
// holder releases and every waiter locks and at once unlocks in turn.
// Beyond the peers' fields, out_of_order counts handoffs that did not go to
// the next node in sequence order (0: served strictly FIFO).
func waiters(root string) {
	path := root + "/w"
	w := *wFlag
	hwmStart := procStatus()["VmHWM"]
	c := newClient()
	if *warmup > 0 {
		wm := mutex(c, root+"/warm-w")
		for i := 0; i < *warmup; i++ {
			if err := wm.Lock(bg); err != nil {
				fatal(err)
			}
			if err := wm.Unlock(bg); err != nil {
				fatal(err)
			}
		}
	}
	holder := mutex(c, path)
	if err := holder.Lock(bg); err != nil {
		fatal(err)
	}
	lat := make([]time.Duration, w)
	seqs := make([]int64, w) // sequence number of the i-th holder's node
	var idx, done atomic.Int64
	var lastRelease, lastAcquire atomic.Int64
	var holders, maxHolders atomic.Int32
	holders.Store(1)
	maxHolders.Store(1)
	base := time.Now()
	mono := func() int64 { return int64(time.Since(base)) }
	errBefore := errCount.Load()
	q0 := time.Now()
	for t := 0; t < w; t++ {
		go func() {
			defer done.Add(1)
			m := mutex(c, path)
			if err := m.Lock(bg); err != nil {
				errCount.Add(1)
				fmt.Fprintf(os.Stderr, "[%s] waiter %d error: %v\n", impl, t, err)
				return
			}
			n := mono()
			h := holders.Add(1)
			updateMax(&maxHolders, h)
			if h > 1 {
				violations.Add(1)
				fmt.Fprintf(os.Stderr, "!!! [%s] mutual exclusion (waiters) VIOLATED: holders=%d\n", impl, h)
			}
			i := idx.Add(1) - 1
			lat[i] = time.Duration(n - lastRelease.Load())
			seqs[i] = nodeSeq(m.Node())
			lastAcquire.Store(n)
			holders.Add(-1)
			lastRelease.Store(mono())
			if err := m.Unlock(bg); err != nil {
				errCount.Add(1)
				fmt.Fprintf(os.Stderr, "[%s] waiter %d unlock error: %v\n", impl, t, err)
			}
		}()
	}
	guard := max(10*time.Second, 10*time.Duration(*stallMs)*time.Millisecond)
	deadline := time.Now().Add(guard + time.Duration(w)*20*time.Millisecond)
	ch := 0
	for {
		if ch = children(c, path); ch >= w+1 {
			break
		}
		if time.Now().After(deadline) || errCount.Load() > errBefore {
			fmt.Fprintf(os.Stderr, "!!! [%s] waiters: only %d of %d contender nodes queued\n", impl, ch, w+1)
			os.Exit(1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	queue := time.Since(q0)
	var watches int64
	for {
		if watches, _, _ = lockWatches(nil, path); watches >= int64(w) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if watches < int64(w) {
		fmt.Fprintf(os.Stderr, "[%s] waiters: only %d of %d predecessor watches seen in wchp\n", impl, watches, w)
	}
	peak := procStatus()
	goroutines := runtime.NumGoroutine()
	t0 := mono()
	lastRelease.Store(t0)
	holders.Add(-1)
	if err := holder.Unlock(bg); err != nil {
		fatal(err)
	}
	seen, lastProgress := int64(-1), time.Now()
	for done.Load() < int64(w) {
		time.Sleep(10 * time.Millisecond)
		if d := done.Load(); d != seen {
			seen, lastProgress = d, time.Now()
		} else if time.Since(lastProgress) > guard {
			fmt.Fprintf(os.Stderr, "!!! [%s] waiters: no handoff for %v after %d of %d handoffs\n", impl, guard, idx.Load(), w)
			os.Exit(1)
		}
	}
	handoffs := int(idx.Load())
	wall := max(time.Duration(lastAcquire.Load()-t0), 1)
	chAfter := children(c, path)
	c.Close()
	end := procStatus()
	l := lat[:handoffs]
	s := append([]time.Duration(nil), l...)
	sortDur(s)
	emit("waiters", w, handoffs, wall, l,
		kv{"waiters", w}, kv{"sessions", 1}, kv{"handoffs", handoffs},
		kv{"handoffs_per_s", r3(float64(handoffs) / wall.Seconds())},
		kv{"handoff_p50_ms", r3(pct(s, 50))}, kv{"handoff_p99_ms", r3(pct(s, 99))},
		kv{"queue_s", r3(queue.Seconds())}, kv{"children_at_start", ch}, kv{"watches_at_start", watches},
		kv{"children_after", chAfter}, kv{"threads_at_peak", peak["Threads"]},
		kv{"tasks_at_peak", goroutines}, kv{"tasks_kind", "goroutines"},
		kv{"vmhwm_start_kb", hwmStart}, kv{"vmhwm_kb", end["VmHWM"]}, kv{"vmrss_peak_kb", peak["VmRSS"]},
		kv{"peak_rss_mb", r3(float64(end["VmHWM"]) / 1024)}, kv{"max_holders", maxHolders.Load()},
		kv{"out_of_order", outOfOrder(seqs[:handoffs])}, kv{"errors", errCount.Load()})
	if n := outOfOrder(seqs[:handoffs]); n > 0 {
		fmt.Fprintf(os.Stderr, "[%s] waiters: %d handoffs out of queue order\n", impl, n)
	}
	if handoffs != w {
		fmt.Fprintf(os.Stderr, "!!! [%s] waiters: %d of %d handoffs\n", impl, handoffs, w)
		errCount.Add(1)
	}
}

// nodeSeq is the sequence number at the end of a lock node's path (-1 if none).
func nodeSeq(node string) int64 {
	i := len(node)
	for i > 0 && node[i-1] >= '0' && node[i-1] <= '9' {
		i--
	}
	n, err := strconv.ParseInt(node[i:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// outOfOrder counts handoffs that went to a node queued after the next
// holder's: 0 means the waiters were served in queue (FIFO) order.
func outOfOrder(seqs []int64) int {
	n := 0
	for i := 1; i < len(seqs); i++ {
		if seqs[i] < seqs[i-1] || seqs[i] < 0 {
			n++
		}
	}
	return n
}

// cpuTime is this process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpuField(cpu time.Duration, ops int) kv {
	return kv{"cpu_ms_per_op", r3(float64(cpu.Microseconds()) / 1000 / float64(max(ops, 1)))}
}

func main() {
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *connect == "" && strings.TrimSpace(strings.ReplaceAll(*workloads, ",", "")) != "" {
		srv, err := zktest.NewServer()
		if err != nil {
			fatal(err)
		}
		defer srv.Close()
		*connect = srv.ConnectString()
	}
	root := *rootFlag
	if root == "" {
		root = fmt.Sprintf("/bench/gocurator-%d", time.Now().UnixMilli())
	}
	multi := false
	for _, w := range strings.Split(*workloads, ",") {
		if w = strings.TrimSpace(w); w != "" && w != "waiters" {
			multi = true
		}
	}
	if *warmup > 0 && multi {
		warm(root)
	}
	for _, w := range strings.Split(*workloads, ",") {
		switch strings.TrimSpace(w) {
		case "uncontended":
			uncontended(root)
		case "contended":
			contended(root)
		case "semaphore":
			semaphoreWL(root)
		case "rwlock":
			rwlock(root)
		case "timeouts":
			timeouts(root)
		case "waiters":
			waiters(root)
		case "":
		default:
			fatal(fmt.Errorf("unknown workload %q", w))
		}
	}
	code := 0
	if errCount.Load() > 0 {
		code = 1
	}
	if violations.Load() > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d exclusion violations\n", violations.Load())
		code = 3
	}
	if code != 0 {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
}
