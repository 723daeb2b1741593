package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The peer processes of the end-to-end test are this test binary again.
func TestMain(m *testing.M) {
	goLibraries["broken"] = newFakeLib(0, 0) // violation_test.go: a lock that excludes nobody
	loses := newFakeLib(0, 0)                // and one whose release then fails
	loses.lose = true
	goLibraries["brokenloses"] = loses
	if os.Getenv(childEnv) == "1" {
		os.Exit(mainArgs(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestHarness runs the whole harness in the tiny preset against a real
// ZooKeeper (zktest, or ZK_CONNECT) for gocurator, gozk and, when its jars
// are installed (always in CI), curator. It checks correctness only: no
// violation, every run of every peer gave a figure, the ratios exist.
// Never a speed.
func TestHarness(t *testing.T) {
	peers := "gocurator,gozk"
	if p, err := buildCurator(context.Background()); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the curator peer must run in CI: %v", err)
		}
		t.Logf("curator peer left out: %v", err)
	} else {
		p.remove()
		peers += ",curator"
	}
	if p, err := buildKazoo(context.Background()); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the kazoo peer must run in CI: %v", err)
		}
		t.Logf("kazoo peer left out: %v", err)
	} else {
		p.remove()
		peers += ",kazoo"
	}
	jsonFile := filepath.Join(t.TempDir(), "results.json")
	c, rep, out := runHarness(t, "--mode", "tiny", "--rounds", "2", "--peers", peers, "--json", jsonFile, "--warmup-time", "200ms")
	jobs := plan(c)
	for _, j := range jobs {
		for _, p := range j.peers {
			var runs []*Result
			for _, r := range rep.Results {
				if r.Peer == p && r.Workload == j.workload && r.Clients == j.clients && r.Variant == j.variant {
					runs = append(runs, r)
				}
			}
			if len(runs) != c.rounds {
				t.Errorf("%s %s %d: %d runs, want %d", p, j.workload, j.clients, len(runs), c.rounds)
			}
			for _, r := range runs {
				checkRun(t, c, r)
			}
		}
	}
	for _, r := range rep.Table {
		for _, p := range c.peers {
			if cl := r.Cells[p]; !cl.ok() && cl.Status != "n/a" && cl.Status != "not run" {
				t.Errorf("%s %s %s: %s has no figure (%s)", r.Workload, r.Param, r.Unit, p, cl.Status)
			}
		}
		for _, p := range ratioPeers {
			if cl := r.Cells[p]; cl != nil && cl.ok() {
				if v, ok := r.Ratios[p]; !ok || !(v > 0) {
					t.Errorf("%s %s %s: no gocurator/%s ratio", r.Workload, r.Param, r.Unit, p)
				}
			}
		}
	}
	for _, want := range []string{"gocurator/gozk", "cpu contended", "MB peak RSS", "semaphore", "processes", "cpu processes",
		"cacheload", "ms to initialized", "MB RSS growth", "cachelag", "ms lag p99", "% changes seen",
		"discoveryquery", "read ops/s", "cache ops/s", "provider ops/s", "discoverylag", "% registrations seen", "atomic",
		"queue", "K=2 lockpath", "K=2 nolock", "items/s", "puts/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q", want)
		}
	}
	var saved report
	if b, err := os.ReadFile(jsonFile); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	if len(saved.Results) != len(rep.Results) || len(saved.Table) != len(rep.Table) {
		t.Errorf("--json holds %d results and %d rows, want %d and %d", len(saved.Results), len(saved.Table), len(rep.Results), len(rep.Table))
	}
}

// TestHarnessEnsemble runs the harness against a local 3-member ensemble
// (--ensemble 3): the peers get the three servers, and the waiters' check
// finds their watches on whichever server their session chose, the Java
// peer's too (it once asked the first server only, and its waiters run sat
// out its deadline). Correctness only, as TestHarness.
func TestHarnessEnsemble(t *testing.T) {
	peers := "gocurator,gozk"
	if p, err := buildCurator(context.Background()); err == nil {
		p.remove()
		peers += ",curator"
	}
	c, rep, out := runHarness(t, "--mode", "tiny", "--connect=", "--ensemble", "3",
		"--peers", peers, "--workloads", "contended,waiters", "--k", "2", "--server-warmup", "5")
	if srv := rep.Environment["server"]; !strings.Contains(srv, "3-member ensemble") {
		t.Errorf("server %q, want a 3-member ensemble", srv)
	}
	if len(rep.Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rep.Results {
		checkRun(t, c, r)
		if r.Round < 1 {
			t.Errorf("%s %s: a server warm-up run (round %d) reported", r.Peer, r.Workload, r.Round)
		}
	}
	if !strings.Contains(out, "server warm-up: before round 1") {
		t.Error("the legend does not say the server was warmed up")
	}
	if _, err := parseFlags([]string{"--ensemble", "0"}, io.Discard); err == nil {
		t.Error("--ensemble 0 accepted")
	}
}

// TestServerJVMPresets: the published figures (full) and quick's run
// against a server started as users run it (the JVM's default compilers
// and collector, as ../shared/peers' server), warmed before round 1; the
// test's own (tiny) keeps zktest's quicker start.
func TestServerJVMPresets(t *testing.T) {
	for mode, want := range map[string]string{"full": "production", "quick": "production", "tiny": "test"} {
		c, err := parseFlags([]string{"--mode", mode}, io.Discard)
		if err != nil || c.serverJVM != want {
			t.Errorf("--mode %s: server JVM %q, %v; want %q", mode, c.serverJVM, err, want)
		}
		// A production JVM compiles each request pattern late: its first
		// run would pay for it, in round 1 (warmServer).
		if err == nil && (c.serverJVM == "production") != (c.serverWarmup > 0) {
			t.Errorf("--mode %s: server JVM %q with --server-warmup %d", mode, c.serverJVM, c.serverWarmup)
		}
	}
	if _, err := parseFlags([]string{"--server-jvm", "fast"}, io.Discard); err == nil {
		t.Error("--server-jvm fast accepted")
	}
}

// TestStallOverInternalWaits: the stall limit must be well over every wait
// inside a peer that ends by itself (it once equalled the waiters' watch
// deadline, so a slow server could make a spurious STALL).
func TestStallOverInternalWaits(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.stall < 2*max(connectWait, watchWait) || minStall < 2*max(connectWait, watchWait) {
		t.Errorf("--stall %v, least accepted %v: want at least twice %v and %v", c.stall, minStall, connectWait, watchWait)
	}
	if _, err := parseFlags([]string{"--stall", watchWait.String()}, io.Discard); err == nil {
		t.Errorf("--stall %v accepted", watchWait)
	}
}

// runHarness runs the harness with args and fails the test on an error, a
// violation, a failed run or a peer unavailable; it returns the printed
// table too.
func runHarness(t *testing.T, args ...string) (*config, *report, string) {
	t.Helper()
	// a -race binary sleeps 1 s at exit by default; the peers are this binary
	t.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	c, err := parseFlags(args, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	var out, log bytes.Buffer
	rep, err := harness(context.Background(), c, &out, &log)
	t.Logf("stderr:\n%s\nstdout:\n%s", log.String(), out.String())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violations != 0 || rep.Failures != 0 || len(rep.Unavailable) != 0 {
		t.Fatalf("violations %d, failures %d, unavailable %v", rep.Violations, rep.Failures, rep.Unavailable)
	}
	return c, rep, out.String()
}

// TestWarmupByTime: a warm-up goes on past its count until its time is up,
// and keeps the latencies of the counted acquisitions only.
func TestWarmupByTime(t *testing.T) {
	var n atomic.Int64
	t0 := time.Now()
	w := timed(3, 5, 200*time.Millisecond, func(int, int) (time.Duration, error) {
		n.Add(1)
		time.Sleep(time.Millisecond)
		return time.Millisecond, nil
	})
	if el := time.Since(t0); el < 200*time.Millisecond || w.wall < 200*time.Millisecond {
		t.Errorf("warm-up ended after %v (measured %v), want at least 200ms", el, w.wall)
	}
	if w.made != int(n.Load()) || w.made < 20 || len(w.lat) != 5 {
		t.Errorf("made %d (body ran %d times), %d latencies; want more than the 5 counted, and 5 latencies", w.made, n.Load(), len(w.lat))
	}
	if w := timed(2, 7, 0, func(int, int) (time.Duration, error) { return 0, nil }); w.made != 7 {
		t.Errorf("a timed part made %d acquisitions, want exactly 7", w.made)
	}
}

// checkRun checks one run's own figures.
func checkRun(t *testing.T, c *config, r *Result) {
	t.Helper()
	if isCacheWorkload(r.Workload) {
		checkCacheRun(t, c, r)
		return
	}
	if isDiscoveryWorkload(r.Workload) {
		checkDiscoveryRun(t, c, r)
		return
	}
	want := c.ops
	switch r.Workload {
	case "uncontended":
		want = c.n
	case "waiters":
		want = r.Clients
	}
	name := r.Peer + " " + r.Workload
	if r.failed() || r.Ops != want || !(r.OpsPerS > 0) || r.VmHWMKB <= 0 {
		t.Errorf("%s %d round %d: ops %d (want %d), %.1f/s, VmHWM %d kB, exit %d %s",
			name, r.Clients, r.Round, r.Ops, want, r.OpsPerS, r.VmHWMKB, r.Exit, r.Error)
	}
	if r.Violations != 0 || r.Workload != "rwlock" && r.MaxHolders > r.Limit {
		t.Errorf("%s: %d violations, max holders %d, limit %d", name, r.Violations, r.MaxHolders, r.Limit)
	}
	// the warm-up: the same for every peer, its count and its time at least
	if w := warmupOf(c, job{workload: r.Workload}); r.WarmupOps < w || r.WarmupS < c.warmupTime.Seconds() {
		t.Errorf("%s %d: warm-up of %d acquisitions in %.3fs, want at least %d and %v", name, r.Clients, r.WarmupOps, r.WarmupS, w, c.warmupTime)
	}
	wantChecked := c.check
	switch r.Workload {
	case "uncontended": // one worker never overlaps itself
		wantChecked = 0
	case "waiters":
		wantChecked = min(c.check, r.Clients)
	case "atomic": // the counter checked against the timed increments
		wantChecked = c.ops
	case "queue": // every timed item checked taken once
		wantChecked = c.ops
		if !(r.PutPerS > 0) || r.Variant == "" {
			t.Errorf("%s %d %s: %.1f puts/s", name, r.Clients, r.Variant, r.PutPerS)
		}
	}
	if r.Checked != wantChecked {
		t.Errorf("%s %d: checking pass of %d acquisitions, want %d", name, r.Clients, r.Checked, wantChecked)
	}
	if r.Workload == "rwlock" && r.Writes != (c.ops+9)/10 {
		t.Errorf("%s: %d writes of %d acquisitions, want every 10th", name, r.Writes, c.ops)
	}
	// At least the W predecessor watches: a gocurator waiter also marks
	// its own node (internal/driver/handoff.go), a watched node more.
	if r.Workload == "waiters" && r.WatchesSeen < r.Clients {
		t.Errorf("%s %d: released with %d watched nodes, fewer than the %d predecessors", name, r.Clients, r.WatchesSeen, r.Clients)
	}
}

// checkCacheRun checks one run of a cache workload: cacheload's cache told
// every node of the tree before it was initialized (the peer fails
// otherwise: here the result says so), with a time and memory figures;
// cachelag's writer made every change of the timed part (and maybe a few
// of the warm-up's, sent late when the writer is behind), the cache told
// at least one and never more events than changes (coalescing may skip
// some), with lags.
func checkCacheRun(t *testing.T, c *config, r *Result) {
	t.Helper()
	name := fmt.Sprintf("%s %s (vs %s) round %d", r.Peer, r.Workload, r.Variant, r.Round)
	if r.failed() {
		t.Errorf("%s: exit %d %s", name, r.Exit, r.Error)
		return
	}
	if r.Variant == "" || r.VmHWMKB <= 0 {
		t.Errorf("%s: variant %q, VmHWM %d kB", name, r.Variant, r.VmHWMKB)
	}
	switch r.Workload {
	case "cacheload":
		all, _ := treePaths("/t", must(parseShape(c.loadTree)))
		if r.Ops != len(all) || !(r.WallS > 0) || r.BaseKB <= 0 || r.BaseKB > r.VmHWMKB {
			t.Errorf("%s: %d nodes (want %d) in %.3fs, RSS %d kB before, %d kB peak", name, r.Ops, len(all), r.WallS, r.BaseKB, r.VmHWMKB)
		}
	case "cachelag":
		want, warm := int(c.lagTime.Seconds()*float64(c.lagRate)), int(c.warmupTime.Seconds()*float64(c.lagRate))
		if r.Changes < want || r.Changes > want+warm || r.Ops < 1 || r.Ops > r.Changes || !(r.ChangesPerS > 0) {
			t.Errorf("%s: %d events of %d changes (want %d) at %.0f/s", name, r.Ops, r.Changes, want, r.ChangesPerS)
		}
		if !(r.P50Ms > 0) || r.P99Ms < r.P50Ms {
			t.Errorf("%s: lag p50 %.3f ms, p99 %.3f ms", name, r.P50Ms, r.P99Ms)
		}
	}
}
