package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
)

// row is one line of the table: one figure of one job for every peer.
type row struct {
	Workload string           `json:"workload"`
	Param    string           `json:"param"` // K=4, W=1000, vs CuratorCache
	Unit     string           `json:"unit"`  // ops/s, handoffs/s, MB peak RSS, CPU ms/acq, ms lag p99
	Cells    map[string]*cell `json:"cells"`
	// gocurator's median over the peer's: above 1 is better for a rate,
	// below 1 for memory and CPU. Absent when either figure is.
	Ratios map[string]float64 `json:"ratios"`
}

type cell struct {
	Median float64 `json:"median,omitempty"`
	Spread float64 `json:"spread,omitempty"` // (max-min)/median
	Runs   int     `json:"runs"`
	Status string  `json:"status,omitempty"` // n/a, not run, unavailable, FAIL, VIOLATION
}

func (c *cell) ok() bool { return c.Status == "" && c.Runs > 0 }

// rows builds the table from the results: per job its rate; for waiters
// also peak RSS; for the uncontended and K=cpuK contended runs the CPU
// per acquisition when the cpu workload was asked for.
func rows(c *config, jobs []job, results []*Result, unavailable map[string]string) []row {
	var out []row
	wantCPU := slices.Contains(c.workloads, "cpu")
	for _, j := range jobs {
		param := fmt.Sprintf("K=%d", j.clients)
		switch {
		case j.workload == "waiters":
			param = fmt.Sprintf("W=%d", j.clients)
		case isCacheWorkload(j.workload) && j.variant != "":
			param = "vs " + j.variant
		case isCacheWorkload(j.workload):
			param = "-"
		case isDiscoveryWorkload(j.workload):
			param = fmt.Sprintf("N=%d", j.clients)
		case j.workload == "queue":
			param = fmt.Sprintf("K=%d %s", j.clients, j.variant)
		}
		add := func(label, unit string, value func(*Result) float64) {
			r := row{Workload: label, Param: param, Unit: unit, Cells: map[string]*cell{}, Ratios: map[string]float64{}}
			for _, p := range c.peers {
				r.Cells[p] = summarize(p, j, results, unavailable, value)
			}
			if g := r.Cells["gocurator"]; g != nil && g.ok() {
				for _, p := range ratioPeers {
					if o := r.Cells[p]; o != nil && o.ok() && o.Median > 0 {
						r.Ratios[p] = g.Median / o.Median
					}
				}
			}
			out = append(out, r)
		}
		switch {
		case j.workload == "waiters":
			add("waiters", "handoffs/s", func(r *Result) float64 { return r.OpsPerS })
			add("waiters", "MB peak RSS", func(r *Result) float64 { return float64(r.VmHWMKB) / 1024 })
		case j.workload == "cacheload":
			add("cacheload", unitLoad, func(r *Result) float64 { return r.WallS * 1000 })
			add("cacheload", unitPeakRSS, func(r *Result) float64 { return float64(r.VmHWMKB) / 1024 })
			add("cacheload", "MB RSS growth", func(r *Result) float64 { return float64(r.VmHWMKB-r.BaseKB) / 1024 })
		case j.workload == "cachelag":
			add("cachelag", "ms lag p50", func(r *Result) float64 { return r.P50Ms })
			add("cachelag", unitLagP99, func(r *Result) float64 { return r.P99Ms })
			add("cachelag", "% changes seen", func(r *Result) float64 { return 100 * float64(r.Ops) / float64(max(r.Changes, 1)) })
		case isDiscoveryWorkload(j.workload):
			discoveryRows(j.workload, add)
		case j.workload == "queue":
			add("queue", "items/s", func(r *Result) float64 { return r.OpsPerS })
			add("queue", "puts/s", func(r *Result) float64 { return r.PutPerS })
			add("queue", "ms item p50", func(r *Result) float64 { return r.P50Ms })
		case slices.Contains(c.workloads, j.workload):
			add(j.workload, "ops/s", func(r *Result) float64 { return r.OpsPerS })
		}
		if wantCPU && (j.workload == "uncontended" || j.workload == "processes" || j.workload == "contended" && j.clients == cpuK(c)) {
			add("cpu "+j.workload, "CPU ms/acq", func(r *Result) float64 { return r.CPUMsPerOp })
		}
	}
	return out
}

// The units of the rows the targets are on (targets).
const (
	unitLoad    = "ms to initialized"
	unitPeakRSS = "MB peak RSS"
	unitLagP99  = "ms lag p99"
)

// target is one of issue 40's targets for gocurator's Cache: its ratio to
// a Curator cache in a row of the table, at most max.
type target struct {
	workload, param, unit string
	max                   float64
	what                  string
}

var cacheTargets = []target{
	{"cacheload", "vs CuratorCache", unitLoad, 0.5, "load at least 2x faster than CuratorCache"},
	{"cacheload", "vs CuratorCache", unitPeakRSS, 0.25, "at most 25% of CuratorCache's memory"},
	{"cachelag", "vs CuratorCache", unitLagP99, 1, "lag p99 no worse than CuratorCache's"},
	{"cachelag", "vs TreeCache", unitLagP99, 1, "lag p99 no worse than TreeCache's"},
}

// targets says, for each target whose row has a ratio, whether it is met.
func targets(rs []row) string {
	var b strings.Builder
	for _, t := range cacheTargets {
		for _, r := range rs {
			if r.Workload != t.workload || r.Param != t.param || r.Unit != t.unit {
				continue
			}
			v, ok := r.Ratios["curator"]
			if !ok {
				continue
			}
			verdict := "met"
			if v > t.max {
				verdict = "NOT met"
			}
			fmt.Fprintf(&b, "target (issue 40): %s: %s %s gocurator/curator %.2fx, want <= %.2fx: %s\n", t.what, t.workload, t.unit, v, t.max, verdict)
		}
	}
	return b.String()
}

func summarize(peer string, j job, results []*Result, unavailable map[string]string, value func(*Result) float64) *cell {
	switch {
	case unavailable[peer] != "":
		return &cell{Status: "unavailable"}
	case !supports(peer, j.workload):
		return &cell{Status: "n/a"}
	case !slices.Contains(j.peers, peer):
		return &cell{Status: "not run"}
	}
	c := &cell{}
	var vals []float64
	for _, r := range results {
		if r.Peer != peer || r.Workload != j.workload || r.Clients != j.clients || r.Variant != j.variant {
			continue
		}
		c.Runs++
		switch {
		case r.Violations > 0 || r.Exit == exitViolation:
			c.Status = "VIOLATION"
		case r.failed():
			if c.Status == "" {
				c.Status = "FAIL"
			}
		default:
			vals = append(vals, value(r))
		}
	}
	if c.Runs == 0 {
		return &cell{Status: "not run"}
	}
	if c.Status != "" || len(vals) == 0 {
		return c
	}
	sort.Float64s(vals)
	m := vals[len(vals)/2]
	if len(vals)%2 == 0 {
		m = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
	}
	c.Median = m
	if m > 0 {
		c.Spread = (vals[len(vals)-1] - vals[0]) / m
	}
	return c
}

// printTable prints the rows aligned, one column per peer, then the ratios.
func printTable(w io.Writer, peers []string, rs []row) {
	header := []string{"workload", "", "unit"}
	for _, p := range peers {
		header = append(header, p+" (spread)")
	}
	peers = slices.DeleteFunc(slices.Clone(peers), func(p string) bool { return p == "kazoo" && !anyCell(rs, p) })
	var ratios []string
	if slices.Contains(peers, "gocurator") {
		for _, p := range ratioPeers {
			if slices.Contains(peers, p) {
				ratios = append(ratios, p)
				header = append(header, "gocurator/"+p)
			}
		}
	}
	lines := [][]string{header}
	for _, r := range rs {
		l := []string{r.Workload, r.Param, r.Unit}
		for _, p := range peers {
			l = append(l, formatCell(r.Cells[p], r.Unit))
		}
		for _, p := range ratios {
			if v, ok := r.Ratios[p]; ok {
				l = append(l, fmt.Sprintf("%.2fx", v))
			} else {
				l = append(l, "-")
			}
		}
		lines = append(lines, l)
	}
	widths := make([]int, len(header))
	for _, l := range lines {
		for i, s := range l {
			widths[i] = max(widths[i], len(s))
		}
	}
	for _, l := range lines {
		var b strings.Builder
		for i, s := range l {
			if i < 3 {
				fmt.Fprintf(&b, "%-*s  ", widths[i], s)
			} else {
				fmt.Fprintf(&b, "%*s  ", widths[i], s)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// ratioPeers are the peers gocurator's figures are divided by.
var ratioPeers = []string{"gozk", "curator", "kazoo"}

// anyCell tells whether a peer has a cell other than n/a: the kazoo
// column shows only in a table with the queue workload.
func anyCell(rs []row, peer string) bool {
	for _, r := range rs {
		if c := r.Cells[peer]; c != nil && c.Status != "n/a" {
			return true
		}
	}
	return false
}

func formatCell(c *cell, unit string) string {
	if c == nil {
		return "-"
	}
	if !c.ok() {
		if c.Status == "FAIL" || c.Status == "VIOLATION" {
			return fmt.Sprintf("%s (%d runs)", c.Status, c.Runs)
		}
		return c.Status
	}
	var v string
	switch {
	case strings.HasPrefix(unit, "CPU"):
		v = fmt.Sprintf("%.3f", c.Median)
	case strings.HasPrefix(unit, "MB"), strings.HasPrefix(unit, "%"):
		v = fmt.Sprintf("%.1f", c.Median)
	case strings.HasPrefix(unit, "ms") && c.Median < 100:
		v = fmt.Sprintf("%.2f", c.Median)
	default:
		v = fmt.Sprintf("%.0f", c.Median)
	}
	return fmt.Sprintf("%s (%.0f%%)", v, math.Round(c.Spread*100))
}
