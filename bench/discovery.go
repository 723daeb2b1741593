package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The discovery workloads (issue 41): gocurator's package discovery beside
// Curator 5.4's curator-x-discovery (curator/DiscoveryWorkloads.java).
// go-zookeeper has no service discovery: n/a. The harness registers the
// instances, with a session of its own, under one base path for the whole
// run (<root>/discovery); each workload has a service of its own, named
// as the workload; each peer process has one session.
//
// discoveryquery: the service has --instances instances (N, registered
// once, not timed). Each peer process measures, one caller at a time:
// read, the service's instances read from ZooKeeper at each call
// (Discovery.Instances; Curator's queryForInstances), --ops calls after a
// warm-up as the lock workloads' (at least --warmup calls and
// --warmup-time); cache, the same list served by a started cache
// (Cache.Instances; ServiceCache.getInstances), as many calls as fit in
// --call-time, after a warm-up of --warmup-time; provider, one instance
// picked by a started provider, round-robin (Provider.Instance;
// ServiceProvider.getInstance), the same. Every call must see the N
// instances (the provider: one), or the run fails. The calls of a cache
// last a fixed time, not a fixed count: one library's may be ten times
// slower than the other's, and a count that gives the faster a timed part
// long enough would keep the slower busy for minutes.
//
// discoverylag: the service has N instances when each run starts; the
// harness's writer (a session of its own, the same for every peer)
// registers one instance per slot at --disc-rate per second, for
// --warmup-time (not reported) and then --lag-time, and after each
// registration unregisters the oldest beyond N, so that N stay; then it
// registers an end marker. An instance's id carries its send time,
// "SEQ-SENT" (CLOCK_MONOTONIC ns, monoNanos: Curator's registration time
// is in ms, and from the wall clock). The peer's cache records, for each
// instance its listener learns of, the arrival minus the send time
// (gocurator: the cache's created event; Curator's ServiceCacheListener
// says only that something changed: the peer compares getInstances with
// the ids it has seen, at each call). After the end marker the peer waits
// until its cache holds the instances the server has, and reports the
// lag's p50 and p99 over the registrations of the timed part, and how
// many it saw of how many (an instance registered and unregistered
// between two reads of a cache may never show: reported, not failed).

const (
	discoveryQuery = "discoveryquery"
	discoveryLag   = "discoverylag"
)

// discoveryWorkloads are the workloads of this file, in plan order.
var discoveryWorkloads = []string{discoveryQuery, discoveryLag}

func isDiscoveryWorkload(w string) bool { return slices.Contains(discoveryWorkloads, w) }

// lagEndPrefix starts the id of discoverylag's end marker:
// "end-CHANGES-FROM", the timed part's registrations and the send time
// of its first slot.
const lagEndPrefix = "end-"

// lagID is the id of discoverylag's registration seq, sent at sent.
func lagID(seq, sent int64) string {
	return strconv.FormatInt(seq, 10) + "-" + strconv.FormatInt(sent, 10)
}

// lagSent reads the send time in an id of lagID; false for another id
// (the instances registered before the first run, the end marker).
func lagSent(id string) (int64, bool) {
	seq, sent, ok := strings.Cut(id, "-")
	if !ok {
		return 0, false
	}
	if _, err := strconv.ParseInt(seq, 10, 64); err != nil {
		return 0, false
	}
	t, err := strconv.ParseInt(sent, 10, 64)
	return t, err == nil
}

// discoverySession is a session of a library with service discovery
// (gocurator; not go-zookeeper): the discovery workloads use it.
type discoverySession interface {
	discovery(base string) (serviceDiscovery, error)
}

// serviceDiscovery is one registry at a base path (Discovery;
// ServiceDiscovery).
type serviceDiscovery interface {
	// instances reads the service's instances from ZooKeeper and says
	// how many there are.
	instances(ctx context.Context, name string) (int, error)
	// ids lists the service's instance nodes on the server now.
	ids(ctx context.Context, name string) ([]string, error)
	// cache makes a cache of the service, not started; fn (nil: none)
	// gets the created and deleted events of instances by id, and the
	// initialized event, on the cache's delivery goroutine.
	cache(name string, fn func(kind cacheEventKind, id string)) (serviceCache, error)
	// provider makes a round-robin provider of the service, not started.
	provider(name string) (serviceProvider, error)
	close()
}

type serviceCache interface {
	start(ctx context.Context) error // returns once the first load is done
	instances() int                  // one call of the cache's list: its length
	ids() []string                   // the ids it holds
	close()
}

type serviceProvider interface {
	start(ctx context.Context) error
	instance() bool // one pick: false if none
	close()
}

// discoveryOf is the discovery side of a peer's one session, at --root.
func discoveryOf(c *config, lib library) (session, serviceDiscovery) {
	s := openSessions(c, lib, 1)[0]
	ds, ok := s.(discoverySession)
	if !ok {
		fail("%s has no service discovery", c.peer)
	}
	return s, must(ds.discovery(c.root))
}

// discoveryQueryWL is discoveryquery's peer process.
func discoveryQueryWL(c *config, lib library) *Result {
	s, d := discoveryOf(c, lib)
	name, n := c.workload, c.clients
	read := func(int, int) (time.Duration, error) {
		t0 := time.Now()
		got, err := d.instances(bg, name)
		if err != nil {
			return 0, err
		}
		if got != n {
			return 0, fmt.Errorf("%d instances of %s read, want %d", got, name, n)
		}
		return time.Since(t0), nil
	}
	warm := timed(1, c.warmup, c.warmupTime, read)
	t := timed(1, c.ops, 0, read)
	r := result(c, lib, c.ops, t.wall, t.cpu, t.lat).warmedUp(warm)

	sc := must(d.cache(name, nil))
	if err := sc.start(bg); err != nil {
		fail("starting the cache: %v", err)
	}
	r.CacheCalls, r.CachePerS = callRate(c, func() error {
		if got := sc.instances(); got != n {
			return fmt.Errorf("the cache holds %d instances of %s, want %d", got, name, n)
		}
		return nil
	})
	p := must(d.provider(name))
	if err := p.start(bg); err != nil {
		fail("starting the provider: %v", err)
	}
	r.ProviderCalls, r.ProviderPerS = callRate(c, func() error {
		if !p.instance() {
			return fmt.Errorf("the provider of %s has no instance", name)
		}
		return nil
	})
	r.VmHWMKB = procStatus("VmHWM")
	p.close()
	sc.close()
	d.close()
	s.close()
	return r
}

// callRate calls call, one call at a time, for --warmup-time (the
// warm-up), then for --call-time, and returns how many calls that was and
// their rate per second. A call that fails fails the run.
func callRate(c *config, call func() error) (calls int, perS float64) {
	loop := func(d time.Duration) (int, time.Duration) {
		t0 := time.Now()
		i := 0
		for ; i == 0 || i%callsPerLook != 0 || time.Since(t0) < d; i++ {
			if err := call(); err != nil {
				fail("call %d: %v", i, err)
			}
			if i%callsPerLook == 0 {
				progress.Add(1)
			}
		}
		return i, time.Since(t0)
	}
	loop(c.warmupTime)
	n, wall := loop(c.callTime)
	return n, round3(float64(n) / wall.Seconds())
}

// callsPerLook: callRate looks at the clock once per this many calls (a
// look costs about as much as a call of a Java cache).
const callsPerLook = 64

// discoveryLagWL is discoverylag's peer process.
func discoveryLagWL(c *config, lib library) *Result {
	s, d := discoveryOf(c, lib)
	name := c.workload
	var mu sync.Mutex
	samples := make([]lagSample, 0, 1<<12)
	var live, stopped atomic.Bool // from the initialized event on; until converged
	initialized := make(chan struct{})
	ended := make(chan string, 1)
	sc := must(d.cache(name, func(kind cacheEventKind, id string) {
		now := monoNanos()
		switch {
		case kind == cacheInitialized:
			if !live.Swap(true) {
				close(initialized)
			}
		case !live.Load() || stopped.Load() || kind != cacheCreated:
		case strings.HasPrefix(id, lagEndPrefix):
			select {
			case ended <- id:
			default:
			}
		default:
			sent, ok := lagSent(id)
			if !ok {
				return
			}
			mu.Lock()
			samples = append(samples, lagSample{sent, now - sent})
			mu.Unlock()
			progress.Add(1)
		}
	}))
	if err := sc.start(bg); err != nil {
		fail("starting the cache: %v", err)
	}
	<-initialized
	signalReady(c.gate)
	var changes int
	var from int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(<-ended, lagEndPrefix), "%d-%d", &changes, &from); err != nil {
		fail("end marker: %v", err)
	}
	convergeIDs(d, sc, name)
	stopped.Store(true)
	mu.Lock()
	lat := timedLags(samples, from)
	mu.Unlock()
	p50, p99 := latencies(lat)
	r := &Result{Peer: c.peer, Impl: lib.impl(), Workload: c.workload, Clients: c.clients,
		Ops: len(lat), P50Ms: p50, P99Ms: p99, Changes: changes, VmHWMKB: procStatus("VmHWM")}
	sc.close()
	d.close()
	s.close()
	return r
}

// convergeIDs waits until the cache holds the instances the server has
// (listed again at each look: an unregistration finishes on the server
// when its call returns, but a look may come between two), or fails the
// run past convergeWait.
func convergeIDs(d serviceDiscovery, sc serviceCache, name string) {
	deadline := time.Now().Add(convergeWait)
	for {
		want := must(d.ids(bg, name))
		got := sc.ids()
		slices.Sort(want)
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			fail("the cache still differs from the service %v after the last registration: %d instances, the server %d", convergeWait, len(got), len(want))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// discoveryRegistry is the harness's side of the discovery workloads:
// their instances under base, registered by a session of its own
// (prepareDiscovery), and discoverylag's writer.
type discoveryRegistry struct {
	base string
	reg  *harnessRegistry // nil when no discovery workload runs

	mu   sync.Mutex
	live []string // discoverylag's instances, oldest first
	end  string   // its end marker, while registered
	seq  atomic.Int64
}

// prepareDiscovery registers the instances the jobs' discovery workloads
// start with (--instances of each service), not timed; close unregisters
// everything and closes the harness's session.
func (s *spawner) prepareDiscovery(ctx context.Context, jobs []job, root string, stderr io.Writer) (closeFn func(), err error) {
	need := map[string]bool{}
	for _, j := range jobs {
		need[j.workload] = isDiscoveryWorkload(j.workload)
	}
	if !need[discoveryQuery] && !need[discoveryLag] {
		return func() {}, nil
	}
	h, err := openHarnessClient(ctx, s.connect, s.c.session)
	if err != nil {
		return nil, err
	}
	s.disc.base = root + "/discovery"
	reg, err := h.registry(s.disc.base)
	if err != nil {
		h.close()
		return nil, err
	}
	closeFn = func() { reg.close(); h.close() }
	t0 := time.Now()
	for _, w := range discoveryWorkloads {
		if !need[w] {
			continue
		}
		for i := range s.c.instances {
			id := fmt.Sprintf("%s-%03d", w, i)
			if err := reg.register(ctx, w, id, i); err != nil {
				closeFn()
				return nil, fmt.Errorf("registering %s's instances: %w", w, err)
			}
			if w == discoveryLag {
				s.disc.live = append(s.disc.live, id)
			}
		}
	}
	fmt.Fprintf(stderr, "# discovery: %d instances of each service at %s, registered in %.1fs\n", s.c.instances, s.disc.base, time.Since(t0).Seconds())
	s.disc.reg = reg
	return closeFn, nil
}

// runDiscoveryLag runs one discoverylag peer process beside the writer,
// then unregisters the run's end marker.
func (s *spawner) runDiscoveryLag(ctx context.Context, peer string, j job, round int, z size) *Result {
	r := s.runWithWriter(ctx, peer, j, round, s.disc.base, z, func(ctx context.Context, gate string) writeStats {
		return s.writeDiscovery(ctx, gate, j.clients)
	})
	s.disc.mu.Lock()
	end := s.disc.end
	s.disc.end = ""
	s.disc.mu.Unlock()
	if end != "" {
		if err := s.disc.reg.unregister(ctx, end); err != nil && !r.failed() {
			r.Exit, r.Error = -1, fmt.Sprintf("unregistering the end marker: %v", err)
		}
	}
	return r
}

// writeDiscovery is discoverylag's writer for one run (paced): each slot
// registers an instance whose id carries its send time, then unregisters
// the oldest beyond n; then the end marker.
func (s *spawner) writeDiscovery(ctx context.Context, gate string, n int) writeStats {
	if !waitReady(ctx, gate) {
		return writeStats{}
	}
	reg := s.disc.reg
	st, from := s.paced(ctx, s.c.discRate, func(ctx context.Context, i int, sent int64) error {
		id := lagID(s.disc.seq.Add(1), sent)
		if err := reg.register(ctx, discoveryLag, id, i); err != nil {
			return err
		}
		s.disc.mu.Lock()
		s.disc.live = append(s.disc.live, id)
		var old []string
		if k := len(s.disc.live) - n; k > 0 {
			old = slices.Clone(s.disc.live[:k])
			s.disc.live = slices.Delete(s.disc.live, 0, k)
		}
		s.disc.mu.Unlock()
		for _, id := range old {
			if err := reg.unregister(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
	if ctx.Err() != nil || st.err != nil {
		return st
	}
	end := fmt.Sprintf("%s%d-%d", lagEndPrefix, st.changes, from)
	if err := reg.register(ctx, discoveryLag, end, 0); err != nil {
		if ctx.Err() == nil {
			st.err = err
		}
		return st
	}
	s.disc.mu.Lock()
	s.disc.end = end
	s.disc.mu.Unlock()
	return st
}

// discoveryRows adds the rows of a discovery job (table.go's rows).
func discoveryRows(workload string, add func(label, unit string, value func(*Result) float64)) {
	switch workload {
	case discoveryQuery:
		add(workload, "read ops/s", func(r *Result) float64 { return r.OpsPerS })
		add(workload, "cache ops/s", func(r *Result) float64 { return r.CachePerS })
		add(workload, "provider ops/s", func(r *Result) float64 { return r.ProviderPerS })
	case discoveryLag:
		add(workload, "ms lag p50", func(r *Result) float64 { return r.P50Ms })
		add(workload, "ms lag p99", func(r *Result) float64 { return r.P99Ms })
		add(workload, "% registrations seen", func(r *Result) float64 { return 100 * float64(r.Ops) / float64(max(r.Changes, 1)) })
	}
}

// discoveryLog is a discovery run's figures, for the harness's log.
func discoveryLog(r *Result) string {
	if r.Workload == discoveryQuery {
		return fmt.Sprintf("read %.0f/s (p50 %.2f ms)  cache %.0f/s  provider %.0f/s  %.0f MB  (%.1fs; warm-up %d in %.1fs)",
			r.OpsPerS, r.P50Ms, r.CachePerS, r.ProviderPerS, float64(r.VmHWMKB)/1024, r.ProcessS, r.WarmupOps, r.WarmupS)
	}
	return fmt.Sprintf("%d events of %d registrations (%.0f/s)  lag p50 %.2f ms  p99 %.2f ms  %.0f MB  (%.1fs)",
		r.Ops, r.Changes, r.ChangesPerS, r.P50Ms, r.P99Ms, float64(r.VmHWMKB)/1024, r.ProcessS)
}

// discoveryLegend says how to read the discovery workloads' rows, if any
// ran.
func discoveryLegend(c *config, jobs []job) string {
	var query, lag bool
	for _, j := range jobs {
		query = query || j.workload == discoveryQuery
		lag = lag || j.workload == discoveryLag
	}
	if !query && !lag {
		return ""
	}
	s := "discovery: gocurator's package discovery beside curator-x-discovery 5.4 (ServiceDiscovery, ServiceCache, ServiceProvider); gozk: n/a, not applicable (go-zookeeper has no service discovery); N instances of a service registered by the harness's own session; one session per process.\n"
	if query {
		s += fmt.Sprintf("discoveryquery: one caller; read: the N instances read from ZooKeeper at each call (Instances; queryForInstances: a listing, then N reads), %d calls; cache: the same list from a started cache (Cache.Instances; ServiceCache.getInstances), calls for %v; provider: one instance from a started provider, round-robin (Provider.Instance; ServiceProvider.getInstance), calls for %v; each after a warm-up of the same shape.\n",
			c.ops, c.callTime, c.callTime)
	}
	if lag {
		s += fmt.Sprintf("discoverylag: the harness's writer (one session, the same for every peer) registers %d instances/s, each followed by the unregistration of the oldest beyond N, %v unreported then %v, the send time (CLOCK_MONOTONIC) in each id; the lag is the arrival at the cache's listener (gocurator: its created event; Curator: the first cacheChanged whose getInstances has the id) minus that; %% registrations seen = instances seen / registered in the timed part (one registered and unregistered between two reads of a cache may never show: reported, not failed); each run ends once the cache holds the server's instances.\n",
			c.discRate, c.warmupTime, c.lagTime)
	}
	return s
}
