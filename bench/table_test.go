package main

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestTableArithmetic pins what the table says from given results: the
// median (the middle run, or the mean of the two middle ones), the spread
// ((max-min)/median over a peer's runs of one invocation), gocurator's
// ratios, and which cells have no figure and why.
func TestTableArithmetic(t *testing.T) {
	c := &config{peers: []string{"gocurator", "gozk", "curator"}, workloads: []string{"contended", "waiters", "cpu"},
		ks: []int{4}, ws: []int{1000}, wsGo: []int{10000}}
	jobs := plan(c)
	var results []*Result
	add := func(peer, workload string, clients int, r Result) {
		r.Peer, r.Workload, r.Clients, r.Ops = peer, workload, clients, 100
		results = append(results, &r)
	}
	for i, v := range []float64{1500, 1000, 1200} { // odd: the middle one
		add("gocurator", "contended", 4, Result{OpsPerS: v, CPUMsPerOp: []float64{0.3, 0.2, 0.25}[i]})
	}
	for i, v := range []float64{800, 1000} { // even: the mean of the middle two
		add("gozk", "contended", 4, Result{OpsPerS: v, CPUMsPerOp: []float64{0.5, 0.3}[i]})
	}
	for _, v := range []float64{400, 600, 500} {
		add("curator", "contended", 4, Result{OpsPerS: v, CPUMsPerOp: 1})
	}
	for _, v := range []float64{100, 300, 200} {
		add("gocurator", "uncontended", 1, Result{OpsPerS: v, CPUMsPerOp: 0.5})
	}
	for range 3 {
		add("gocurator", "waiters", 1000, Result{OpsPerS: 2000, VmHWMKB: 20 * 1024})
		add("gozk", "waiters", 1000, Result{OpsPerS: 1000, VmHWMKB: 40 * 1024})
	}
	add("gozk", "waiters", 1000, Result{Exit: exitError, Error: "boom"}) // a failed run: no figure at all
	add("curator", "waiters", 1000, Result{Exit: exitError, Error: "boom"})
	add("curator", "waiters", 1000, Result{Violations: 2, Exit: exitViolation}) // a violation outranks a failure
	add("curator", "waiters", 1000, Result{OpsPerS: 500})
	add("gocurator", "waiters", 10000, Result{OpsPerS: 2500, VmHWMKB: 100 * 1024})
	add("gozk", "waiters", 10000, Result{OpsPerS: 250, VmHWMKB: 200 * 1024})

	rs := rows(c, jobs, results, nil)
	find := func(workload, param, unit string) row { t.Helper(); return findRow(t, rs, workload, param, unit) }
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	cell := func(r row, peer string, median, spread float64, runs int) {
		t.Helper()
		cl := r.Cells[peer]
		if !cl.ok() || cl.Runs != runs {
			t.Errorf("%s %s %s: %s: %+v, want a figure from %d runs", r.Workload, r.Param, r.Unit, peer, cl, runs)
			return
		}
		near(r.Workload+" "+r.Unit+" "+peer+" median", cl.Median, median)
		near(r.Workload+" "+r.Unit+" "+peer+" spread", cl.Spread, spread)
	}
	status := func(r row, peer, want string) {
		t.Helper()
		if got := r.Cells[peer].Status; got != want {
			t.Errorf("%s %s %s: %s is %q, want %q", r.Workload, r.Param, r.Unit, peer, got, want)
		}
		if _, ok := r.Ratios[peer]; ok {
			t.Errorf("%s %s %s: a ratio to %s, which has no figure", r.Workload, r.Param, r.Unit, peer)
		}
	}

	r := find("contended", "K=4", "ops/s")
	cell(r, "gocurator", 1200, 500.0/1200, 3)
	cell(r, "gozk", 900, 200.0/900, 2)
	cell(r, "curator", 500, 200.0/500, 3)
	near("contended gocurator/gozk", r.Ratios["gozk"], 1200.0/900)
	near("contended gocurator/curator", r.Ratios["curator"], 1200.0/500)

	r = find("cpu contended", "K=4", "CPU ms/acq")
	cell(r, "gocurator", 0.25, 0.1/0.25, 3)
	cell(r, "gozk", 0.4, 0.2/0.4, 2)
	near("cpu gocurator/gozk", r.Ratios["gozk"], 0.25/0.4)
	near("cpu gocurator/curator", r.Ratios["curator"], 0.25)

	// cpu alone adds the uncontended job, for its CPU row only
	r = find("cpu uncontended", "K=1", "CPU ms/acq")
	cell(r, "gocurator", 0.5, 0, 3)
	status(r, "gozk", "not run") // no results
	for _, r := range rs {
		if r.Workload == "uncontended" {
			t.Errorf("a row %s %s %s, with uncontended not asked for", r.Workload, r.Param, r.Unit)
		}
	}

	r = find("waiters", "W=1000", "handoffs/s")
	cell(r, "gocurator", 2000, 0, 3)
	status(r, "gozk", "FAIL")
	status(r, "curator", "VIOLATION")
	r = find("waiters", "W=1000", "MB peak RSS")
	cell(r, "gocurator", 20, 0, 3)

	r = find("waiters", "W=10000", "MB peak RSS")
	cell(r, "gocurator", 100, 0, 1)
	cell(r, "gozk", 200, 0, 1)
	near("W=10000 MB gocurator/gozk", r.Ratios["gozk"], 0.5)
	status(r, "curator", "not run") // a Go-only job

	var out bytes.Buffer
	printTable(&out, c.peers, rs)
	for _, want := range []string{"1200 (42%)", "900 (22%)", "500 (40%)", "1.33x", "2.40x", "0.250 (40%)", "0.62x",
		"FAIL (4 runs)", "VIOLATION (3 runs)", "20.0 (0%)", "not run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the printed table lacks %q:\n%s", want, out.String())
		}
	}

	// a peer that could not run: every cell says so, and no ratio to it
	for _, r := range rows(c, jobs, results, map[string]string{"curator": "no javac"}) {
		status(r, "curator", "unavailable")
	}
	// a peer without the recipe: n/a
	c.workloads = []string{"semaphore"}
	sem := plan(c)
	for _, r := range rows(c, sem, nil, nil) {
		status(r, "gozk", "n/a")
	}
}

// TestCacheRowsAndTargets pins the cache workloads' rows (one job per
// Curator cache, gocurator's runs matched to their own job by variant,
// gozk n/a) and the verdicts on issue 40's targets.
func TestCacheRowsAndTargets(t *testing.T) {
	c := &config{peers: []string{"gocurator", "gozk", "curator"}, workloads: []string{"cacheload", "cachelag"}}
	jobs := plan(c)
	if len(jobs) != 4 {
		t.Fatalf("%d jobs, want cacheload and cachelag for each of %v", len(jobs), cacheVariants)
	}
	for _, j := range jobs {
		if j.variant == "" || slices.Contains(j.peers, "gozk") || len(j.peers) != 2 {
			t.Errorf("job %+v: want a variant and the peers gocurator and curator", j)
		}
	}
	var results []*Result
	add := func(peer, workload, variant string, r Result) {
		r.Peer, r.Workload, r.Clients, r.Variant, r.Ops = peer, workload, 1, variant, 100
		results = append(results, &r)
	}
	add("gocurator", "cacheload", "CuratorCache", Result{WallS: 0.5, VmHWMKB: 20 * 1024, BaseKB: 10 * 1024})
	add("gocurator", "cacheload", "TreeCache", Result{WallS: 3, VmHWMKB: 20 * 1024})
	add("curator", "cacheload", "CuratorCache", Result{WallS: 2, VmHWMKB: 100 * 1024, BaseKB: 60 * 1024})
	add("curator", "cacheload", "TreeCache", Result{WallS: 2, VmHWMKB: 100 * 1024})
	add("gocurator", "cachelag", "CuratorCache", Result{P50Ms: 1, P99Ms: 30, Changes: 200})
	add("curator", "cachelag", "CuratorCache", Result{P50Ms: 2, P99Ms: 20, Changes: 100})
	rs := rows(c, jobs, results, nil)
	find := func(workload, param, unit string) row { t.Helper(); return findRow(t, rs, workload, param, unit) }
	for _, x := range []struct {
		workload, param, unit string
		ratio                 float64
	}{
		{"cacheload", "vs CuratorCache", unitLoad, 0.25},
		{"cacheload", "vs TreeCache", unitLoad, 1.5}, // its own gocurator run, not the other job's
		{"cacheload", "vs CuratorCache", unitPeakRSS, 0.2},
		{"cacheload", "vs CuratorCache", "MB RSS growth", 0.25},
		{"cachelag", "vs CuratorCache", unitLagP99, 1.5},
		{"cachelag", "vs CuratorCache", "% changes seen", 0.5},
	} {
		r := find(x.workload, x.param, x.unit)
		if v := r.Ratios["curator"]; math.Abs(v-x.ratio) > 1e-9 {
			t.Errorf("%s %s %s: ratio %v, want %v", x.workload, x.param, x.unit, v, x.ratio)
		}
		if r.Cells["gozk"].Status != "n/a" {
			t.Errorf("%s %s %s: gozk %q, want n/a", x.workload, x.param, x.unit, r.Cells["gozk"].Status)
		}
	}
	got := targets(rs)
	for _, want := range []string{
		"load at least 2x faster than CuratorCache: cacheload ms to initialized gocurator/curator 0.25x, want <= 0.50x: met",
		"at most 25% of CuratorCache's memory: cacheload MB peak RSS gocurator/curator 0.20x, want <= 0.25x: met",
		"lag p99 no worse than CuratorCache's: cachelag ms lag p99 gocurator/curator 1.50x, want <= 1.00x: NOT met",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("targets lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TreeCache's") { // no cachelag vs TreeCache figures: no verdict
		t.Errorf("a verdict without figures:\n%s", got)
	}
	var b bytes.Buffer
	printTable(&b, c.peers, rs)
	if !strings.Contains(b.String(), "cachelag   vs CuratorCache  ms lag p99") {
		t.Errorf("the table:\n%s", b.String())
	}
}

// TestTreeShape: the trees of the cache workloads, parents first.
func TestTreeShape(t *testing.T) {
	all, leaves := treePaths("/r", must(parseShape("2x3")))
	if len(all) != 1+2+6 || len(leaves) != 6 || all[0] != "/r" || all[1] != "/r/a0" || leaves[5] != "/r/a1/b2" {
		t.Errorf("2x3: %v, leaves %v", all, leaves)
	}
	for _, bad := range []string{"", "10x", "0x3", "ax2"} {
		if _, err := parseShape(bad); err == nil {
			t.Errorf("shape %q accepted", bad)
		}
	}
}

// findRow is the row of rs for workload, param and unit; none fails t.
func findRow(t *testing.T, rs []row, workload, param, unit string) row {
	t.Helper()
	for _, r := range rs {
		if r.Workload == workload && r.Param == param && r.Unit == unit {
			return r
		}
	}
	t.Fatalf("no row %s %s %s", workload, param, unit)
	return row{}
}
