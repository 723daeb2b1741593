package main

import (
	"bytes"
	"math"
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
	find := func(workload, param, unit string) row {
		t.Helper()
		for _, r := range rs {
			if r.Workload == workload && r.Param == param && r.Unit == unit {
				return r
			}
		}
		t.Fatalf("no row %s %s %s", workload, param, unit)
		return row{}
	}
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
