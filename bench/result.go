package main

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"
)

// Result is what one peer process reports for one workload: the one JSON
// line it prints on stdout. The Go peers fill it in peer.go, the Java peer
// (curator/Bench.java) prints the same fields by hand; the parent adds the
// run fields (round, exit status, wall time of the process) before keeping
// it in --json.
type Result struct {
	Peer     string `json:"peer"`
	Impl     string `json:"impl"` // library and version
	Workload string `json:"workload"`
	Clients  int    `json:"clients"`           // K sessions, or W waiters on one session
	Variant  string `json:"variant,omitempty"` // cache workloads: the curator peer's recipe (CuratorCache, TreeCache)

	Ops        int     `json:"ops"` // acquisitions (handoffs for waiters) timed
	WallS      float64 `json:"wall_s"`
	OpsPerS    float64 `json:"ops_per_s"` // handoffs/s for waiters
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	CPUMsPerOp float64 `json:"cpu_ms_per_op"` // user+system CPU of the process over the timed part / Ops

	MaxHolders int     `json:"max_holders"` // largest holder count seen (readers for rwlock)
	Limit      int     `json:"limit"`       // holders allowed: 1, or 3 leases
	Violations int64   `json:"violations"`
	Writes     int     `json:"writes,omitempty"` // rwlock: write acquisitions among Ops
	WarmupOps  int     `json:"warmup_ops"`       // acquisitions of the warm-up before the timed part
	WarmupS    float64 `json:"warmup_s"`         // and its duration
	Checked    int     `json:"checked"`          // acquisitions of the checking pass (each holding --check-hold); its violations count in Violations

	VmHWMKB     int64   `json:"vmhwm_kb"`               // peak RSS of the process at the end of the timed part
	Threads     int     `json:"threads,omitempty"`      // OS threads when all waiters queued
	QueueS      float64 `json:"queue_s,omitempty"`      // waiters: time until all W nodes (and watches) were there
	WatchesSeen int     `json:"watches_seen,omitempty"` // waiters: watched nodes seen in wchp before the release

	// The cache workloads (cache.go). cacheload: Ops nodes loaded (each a
	// created event), WallS from the cache's start to its initialized
	// event. cachelag: Ops events of the timed changes, P50Ms and P99Ms
	// their lag.
	BaseKB      int64   `json:"base_kb,omitempty"`       // VmRSS once the session was up, before the cache started
	Changes     int     `json:"changes,omitempty"`       // cachelag: changes the writer made in the timed part
	ChangesPerS float64 `json:"changes_per_s,omitempty"` // cachelag: the writer's rate over the timed part (the harness's)

	// The discovery workloads (discovery.go). discoveryquery: Ops reads
	// from ZooKeeper (OpsPerS, P50Ms, P99Ms theirs), then CacheCalls calls
	// of a cache and ProviderCalls of a provider, --call-time each.
	// discoverylag: as cachelag, its changes registrations.
	CacheCalls    int     `json:"cache_calls,omitempty"`
	CachePerS     float64 `json:"cache_per_s,omitempty"`
	ProviderCalls int     `json:"provider_calls,omitempty"`
	ProviderPerS  float64 `json:"provider_per_s,omitempty"`

	// The queue workload (queue.go): Ops items put and taken, OpsPerS
	// their rate end to end, P50Ms and P99Ms their put-to-take latency.
	PutPerS float64 `json:"put_per_s,omitempty"` // Ops over the producers' time alone

	// Filled in by the parent.
	Round    int     `json:"round,omitempty"`
	Exit     int     `json:"exit"`
	ProcessS float64 `json:"process_s,omitempty"` // the whole process, start-up included
	Error    string  `json:"error,omitempty"`
}

// failed tells whether the run produced no usable figure.
func (r *Result) failed() bool { return r.Exit != 0 || r.Error != "" || r.Ops == 0 }

func parseResult(line []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("bad result line %q: %w", line, err)
	}
	return &r, nil
}

// latencies turns acquisition latencies into p50/p99 in ms (nearest rank).
func latencies(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(p float64) float64 {
		i := min(max(int(math.Ceil(p/100*float64(len(s))))-1, 0), len(s)-1)
		return round3(float64(s[i]) / 1e6)
	}
	return at(50), at(99)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
