package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// checkDiscoveryRun checks one run of a discovery workload (TestHarness):
// discoveryquery made its reads (each of the N instances: the peer fails
// otherwise) and its calls of a cache and a provider, with rates;
// discoverylag's writer made every registration of the timed part (and
// maybe a few of the warm-up's, sent late when the writer is behind), the
// cache saw at least one and never more than were registered, with lags.
func checkDiscoveryRun(t *testing.T, c *config, r *Result) {
	t.Helper()
	name := fmt.Sprintf("%s %s N=%d round %d", r.Peer, r.Workload, r.Clients, r.Round)
	if r.failed() {
		t.Errorf("%s: exit %d %s", name, r.Exit, r.Error)
		return
	}
	if r.Clients != c.instances || r.VmHWMKB <= 0 {
		t.Errorf("%s: want N=%d; VmHWM %d kB", name, c.instances, r.VmHWMKB)
	}
	switch r.Workload {
	case discoveryQuery:
		if r.Ops != c.ops || !(r.OpsPerS > 0) || !(r.P50Ms > 0) || r.P99Ms < r.P50Ms {
			t.Errorf("%s: %d reads (want %d) at %.1f/s, p50 %.3f ms, p99 %.3f ms", name, r.Ops, c.ops, r.OpsPerS, r.P50Ms, r.P99Ms)
		}
		if r.CacheCalls < callsPerLook || r.ProviderCalls < callsPerLook || !(r.CachePerS > 0) || !(r.ProviderPerS > 0) {
			t.Errorf("%s: %d cache calls at %.1f/s, %d provider calls at %.1f/s", name, r.CacheCalls, r.CachePerS, r.ProviderCalls, r.ProviderPerS)
		}
		if r.WarmupOps < c.warmup || r.WarmupS < c.warmupTime.Seconds() {
			t.Errorf("%s: warm-up of %d reads in %.3fs, want at least %d and %v", name, r.WarmupOps, r.WarmupS, c.warmup, c.warmupTime)
		}
	case discoveryLag:
		warm, total := slots(c.discRate, c.warmupTime, c.lagTime)
		if want := total - warm; r.Changes < want || r.Changes > total || r.Ops < 1 || r.Ops > r.Changes || !(r.ChangesPerS > 0) {
			t.Errorf("%s: %d instances seen of %d registered (want %d) at %.0f/s", name, r.Ops, r.Changes, want, r.ChangesPerS)
		}
		if !(r.P50Ms > 0) || r.P99Ms < r.P50Ms {
			t.Errorf("%s: lag p50 %.3f ms, p99 %.3f ms", name, r.P50Ms, r.P99Ms)
		}
	}
}

// TestDiscoveryRows pins the discovery workloads' jobs (gocurator and
// curator, gozk n/a, N the service's instances) and rows.
func TestDiscoveryRows(t *testing.T) {
	c := &config{peers: []string{"gocurator", "gozk", "curator"}, workloads: []string{discoveryQuery, discoveryLag}, instances: 20}
	jobs := plan(c)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want discoveryquery and discoverylag", len(jobs))
	}
	for _, j := range jobs {
		if j.clients != 20 || j.variant != "" || slices.Contains(j.peers, "gozk") || len(j.peers) != 2 {
			t.Errorf("job %+v: want N=20 and the peers gocurator and curator", j)
		}
	}
	var results []*Result
	add := func(peer, workload string, r Result) {
		r.Peer, r.Workload, r.Clients, r.Ops = peer, workload, 20, 100
		results = append(results, &r)
	}
	add("gocurator", discoveryQuery, Result{OpsPerS: 1000, CachePerS: 2e6, ProviderPerS: 1e6})
	add("curator", discoveryQuery, Result{OpsPerS: 250, CachePerS: 4e6, ProviderPerS: 1e6})
	add("gocurator", discoveryLag, Result{P50Ms: 1, P99Ms: 4, Changes: 100})
	add("curator", discoveryLag, Result{P50Ms: 2, P99Ms: 2, Changes: 200})
	rs := rows(c, jobs, results, nil)
	for _, x := range []struct {
		workload, unit string
		ratio          float64
	}{
		{discoveryQuery, "read ops/s", 4},
		{discoveryQuery, "cache ops/s", 0.5},
		{discoveryQuery, "provider ops/s", 1},
		{discoveryLag, "ms lag p50", 0.5},
		{discoveryLag, "ms lag p99", 2},
		{discoveryLag, "% registrations seen", 2},
	} {
		r := findRow(t, rs, x.workload, "N=20", x.unit)
		if v := r.Ratios["curator"]; math.Abs(v-x.ratio) > 1e-9 {
			t.Errorf("%s %s: ratio %v, want %v", x.workload, x.unit, v, x.ratio)
		}
		if r.Cells["gozk"].Status != "n/a" {
			t.Errorf("%s %s: gozk %q, want n/a", x.workload, x.unit, r.Cells["gozk"].Status)
		}
	}
	var b bytes.Buffer
	printTable(&b, c.peers, rs)
	for _, want := range []string{"discoveryquery  N=20  cache ops/s", "2000000 (0%)", "n/a", "% registrations seen          100.0 (0%)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestLagIDs: the send time travels in discoverylag's ids; the other ids
// of the service (those registered before the first run, the end marker)
// carry none.
func TestLagIDs(t *testing.T) {
	if sent, ok := lagSent(lagID(7, 123456789)); !ok || sent != 123456789 {
		t.Errorf("lagSent(lagID(7, 123456789)) = %d, %v", sent, ok)
	}
	for _, id := range []string{"discoverylag-000", "end-100-5", "12", "x-5", ""} {
		if sent, ok := lagSent(id); ok {
			t.Errorf("lagSent(%q) = %d, want none", id, sent)
		}
	}
}
