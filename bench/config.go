package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocurator/curator/internal/driver"
)

// config is every flag, for the parent (the harness) and for a peer
// process (--peer NAME --workload W ...), which gets the same binary and
// the flags it needs from the parent.
type config struct {
	// the harness
	mode         string
	rounds       int
	peers        []string
	workloads    []string
	ks           []int // sessions of contended, semaphore, rwlock
	procs        []int // processes of the processes workload
	ws           []int // waiters, every peer
	wsGo         []int // waiters, the Go peers only (a JVM thread per waiter)
	serverWarmup int   // acquisitions of each unreported run before round 1 (the server is a JVM too)
	ensemble     int   // members of the local ZooKeeper the harness starts
	serverJVM    string
	latency      time.Duration // one way, added by a relay in front of the server (latency.go)
	off          string        // gocurator's shortcuts turned off (--off)
	jsonFile     string
	javaOpts     string
	timeout      time.Duration // one peer process, start to end

	// both
	connect string
	n       int           // uncontended pairs
	ops     int           // acquisitions in total, over the K sessions
	hold    time.Duration // inside the critical section, holding the lease
	stall   time.Duration
	session time.Duration
	// the warm-up before the timed part, same shape as the workload: at
	// least warmup acquisitions (a peer: its job's; the harness: every
	// job's but uncontended's, which is warmupN) and at least warmupTime,
	// the same for every peer
	warmup     int
	warmupN    int
	warmupTime time.Duration
	// the checking pass after the timed part (workloads.go): acquisitions
	// (waiters: at most this many), each holding checkHold
	check     int
	checkHold time.Duration

	// the cache workloads (cache.go)
	loadTree string        // cacheload's tree, fan-outs by level ("10x10x100")
	lagTree  string        // cachelag's tree
	lagRate  int           // cachelag: changes per second
	lagTime  time.Duration // cachelag, discoverylag: the timed part of the writing, after --warmup-time

	// the discovery workloads (discovery.go)
	instances int           // instances of each service (a job's K)
	discRate  int           // discoverylag: registrations per second
	callTime  time.Duration // discoveryquery: how long the calls of a cache (and of a provider) last

	// a peer process
	peer     string
	workload string
	clients  int
	root     string
	gate     string // the processes workload's start gate (processes.go)
	shared   string // and its shared holder counts
	variant  string // the cache workloads: the curator peer's recipe (CuratorCache, TreeCache)
	tree     string // the cache workloads: the shape of the tree at --root
}

// defaultJavaOpts are fixed rather than the JVM's defaults, which size the
// heap (and pick the collector) from the machine's RAM and CPUs: the
// curator peer's memory would then measure the machine. G1 is what the JVM
// picks on a server; 512 MB is the old harness's maximum.
const defaultJavaOpts = "-XX:+UseG1GC -Xms64m -Xmx512m"

// minStall: --stall must be over twice the longest wait inside a peer
// that ends by itself (connectWait, watchWait; Bench.java's the same).
var minStall = 2 * max(connectWait, watchWait)

var (
	allPeers     = []string{"gocurator", "gozk", "curator", "kazoo"}
	allWorkloads = []string{"uncontended", "contended", "semaphore", "rwlock", "processes", "waiters", "cpu", "cacheload", "cachelag", discoveryQuery, discoveryLag, "atomic", "queue"}
)

// presets: quick is about 3 minutes on 2 cores (its warm-ups too short for
// the JVM to settle), plus about 4 for the cache workloads (a quick run of
// those alone took 4m15s at a load average of 7 to 13, gocurator's
// 10,000-node loads 8-17 s each: see the Cache's figures), plus about 3
// for the discovery workloads (3m48s alone at a load average of 10 to 17,
// before --call-time bounded discoveryquery's calls of a cache: its
// gocurator processes took 36 s each then, about 12 s now by the
// preset's times), full the published figures (15-19 minutes on 2
// cores: full runs with the server warm-up took 11m23s and 11m29s in one
// hour, 14m21s and 15m10s in a slower one; with the processes workload,
// 17m23s-18m37s in a slow one), tiny the end-to-end test.
var presets = map[string]map[string]string{
	"tiny":  {"rounds": "1", "n": "20", "ops": "40", "k": "2,4", "procs": "2", "w": "10", "w-go": "30", "warmup": "5", "warmup-n": "5", "warmup-time": "0s", "check": "40", "server-warmup": "0", "server-jvm": "test", "timeout": "2m", "load-tree": "2x5x10", "lag-tree": "5x10", "lag-rate": "1000", "lag-time": "1s", "instances": "20", "disc-rate": "200", "call-time": "200ms"},
	"quick": {"rounds": "3", "n": "200", "ops": "400", "k": "4,16", "procs": "4", "w": "200", "w-go": "2000", "warmup": "50", "warmup-n": "500", "warmup-time": "1s", "check": "200", "server-warmup": "100", "server-jvm": "production", "timeout": "3m", "load-tree": "10x10x100", "lag-tree": "10x30", "lag-rate": "1000", "lag-time": "3s", "instances": "20", "disc-rate": "200", "call-time": "2s"},
	"full":  {"rounds": "3", "n": "1000", "ops": "2000", "k": "4,16", "procs": "4", "w": "1000", "w-go": "10000", "warmup": "500", "warmup-n": "10000", "warmup-time": "5s", "check": "300", "server-warmup": "500", "server-jvm": "production", "timeout": "10m", "load-tree": "10x10x100", "lag-tree": "10x30", "lag-rate": "1000", "lag-time": "10s", "instances": "20", "disc-rate": "200", "call-time": "5s"},
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./bench [flags]\n\n%s\nflags (a flag given overrides the --mode preset):\n", usageText)
		fs.PrintDefaults()
	}
	var peers, workloads, ks, procs, ws, wsGo string
	fs.StringVar(&c.mode, "mode", "quick", "preset: quick (about 3 minutes, 7 with the cache workloads), full (the published figures, 15-19 minutes) or tiny (the test)")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds; every peer runs every workload once per round, peers interleaved")
	fs.StringVar(&peers, "peers", strings.Join(allPeers, ","), "peers to compare")
	fs.StringVar(&workloads, "workloads", strings.Join(allWorkloads, ","), "workloads (cpu: CPU per acquisition of the uncontended and K=4 contended runs)")
	fs.StringVar(&ks, "k", "", "sessions for contended, semaphore and rwlock (list)")
	fs.StringVar(&procs, "procs", "", "processes of one session each for processes (list)")
	fs.StringVar(&ws, "w", "", "waiters on one session, every peer (list)")
	fs.StringVar(&wsGo, "w-go", "", "waiters on one session, Go peers only (list; empty: none)")
	fs.IntVar(&c.serverWarmup, "server-warmup", 0, "before round 1, every job but the waiters' runs once per peer, unreported: its warm-up, then this many acquisitions (warms the server's JIT for every request pattern, so that no peer's round-1 figure pays for it; 0: none)")
	fs.StringVar(&c.jsonFile, "json", "", "write every raw result (and the run's settings) to this file")
	fs.StringVar(&c.javaOpts, "java-opts", orDefault(os.Getenv("BENCH_JAVA_OPTS"), defaultJavaOpts), "JVM options of the curator peer (default $BENCH_JAVA_OPTS, else these)")
	fs.DurationVar(&c.timeout, "timeout", 0, "limit for one peer process, killed and reported past it (0: none)")
	fs.StringVar(&c.connect, "connect", os.Getenv("ZK_CONNECT"), "ZooKeeper connect string (default $ZK_CONNECT, else a local server is started)")
	fs.StringVar(&c.off, "off", os.Getenv(offEnv), "gocurator's engine shortcuts to turn off, comma-separated (handoff, parent): to measure what each buys (docs/performance.md); passed to the gocurator peer processes as $"+offEnv)
	fs.IntVar(&c.ensemble, "ensemble", 1, "members of the local ZooKeeper started when no --connect is given (1: one standalone server; 3: a quorum, where reads no longer wait behind other sessions' writes)")
	fs.DurationVar(&c.latency, "latency", 0, "one-way delay a relay in the harness adds between every peer and the server, as a network would (0: none, loopback alone; else at least 1ms)")
	fs.StringVar(&c.serverJVM, "server-jvm", "", "JVM settings of the local ZooKeeper: production (as ZooKeeper's scripts start it, and ../shared/peers: the JVM's default compilers and collector, 512 MB heap) or test (testing/zktest's start-up settings: the C1 compiler alone, the serial collector; each request costs the server more CPU)")
	fs.IntVar(&c.n, "n", 0, "uncontended: acquire+release pairs")
	fs.IntVar(&c.ops, "ops", 0, "contended, semaphore, rwlock: acquisitions in total")
	fs.IntVar(&c.warmup, "warmup", 0, "contended, semaphore, rwlock, waiters: at least this many acquisitions of the same shape before timing, unreported")
	fs.IntVar(&c.warmupN, "warmup-n", 0, "uncontended: at least this many acquire+release pairs before timing, unreported")
	fs.DurationVar(&c.warmupTime, "warmup-time", 0, "every warm-up lasts at least this long, whatever the counts (the curator peer's JVM needs seconds to compile its hot code); the same for every peer")
	fs.DurationVar(&c.hold, "hold", 0, "contended, semaphore, rwlock: time spent holding (the holder counts stay raised meanwhile)")
	fs.IntVar(&c.check, "check", 0, "acquisitions of the checking pass after the timed part, each holding --check-hold, not reported: at --hold 0 the holder counts alone would miss two holders at once (0: none; waiters: min(W, this) waiters)")
	fs.DurationVar(&c.checkHold, "check-hold", time.Millisecond, "time each acquisition of the checking pass holds (at least --hold)")
	fs.DurationVar(&c.stall, "stall", 2*time.Minute, fmt.Sprintf("a peer with no progress for this long fails instead of hanging (over %v: twice the longest wait inside a peer)", minStall))
	fs.DurationVar(&c.session, "session-timeout", 30*time.Second, "ZooKeeper session timeout of every client")
	fs.StringVar(&c.loadTree, "load-tree", "", "cacheload: the tree the caches load, its fan-out at each level (10x10x100: 10 nodes, 10 under each, 100 under each of those)")
	fs.StringVar(&c.lagTree, "lag-tree", "", "cachelag: the tree the writer changes (its leaves), fan-outs as --load-tree")
	fs.IntVar(&c.lagRate, "lag-rate", 0, "cachelag: changes per second the writer makes")
	fs.DurationVar(&c.lagTime, "lag-time", 0, "cachelag, discoverylag: how long the writer's timed part lasts (after --warmup-time of writing not reported)")
	fs.IntVar(&c.instances, "instances", 0, "discoveryquery, discoverylag: instances of the service (discoverylag: as many stay registered)")
	fs.IntVar(&c.discRate, "disc-rate", 0, "discoverylag: registrations per second the writer makes (each followed by an unregistration)")
	fs.DurationVar(&c.callTime, "call-time", 0, "discoveryquery: how long the calls of a cache, and then of a provider, last (after --warmup-time of calls not reported)")
	fs.StringVar(&c.peer, "peer", "", "(internal) run as this peer")
	fs.StringVar(&c.workload, "workload", "", "(internal) the peer's workload")
	fs.IntVar(&c.clients, "clients", 0, "(internal) the peer's K or W")
	fs.StringVar(&c.root, "root", "", "(internal) the peer's znode root")
	fs.StringVar(&c.gate, "gate", "", "(internal) the processes workload's start gate, a directory")
	fs.StringVar(&c.shared, "shared", "", "(internal) the processes workload's holder counts, a file")
	fs.StringVar(&c.variant, "variant", "", "(internal) the cache workloads: the curator peer's recipe")
	fs.StringVar(&c.tree, "tree", "", "(internal) the cache workloads: the shape of the tree at --root")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.peer != "" { // a peer process gets explicit values
		return c, nil
	}
	if c.stall <= minStall {
		return nil, fmt.Errorf("--stall %v: want over %v, twice the longest wait inside a peer (a session, the waiters' watches), so that none is taken for a stall", c.stall, minStall)
	}
	preset, ok := presets[c.mode]
	if !ok {
		return nil, fmt.Errorf("--mode %q: want quick, full or tiny", c.mode)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, v := range preset {
		if !set[name] {
			if err := fs.Set(name, v); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if c.peers, err = names(peers, allPeers, "--peers"); err != nil {
		return nil, err
	}
	if c.workloads, err = names(workloads, allWorkloads, "--workloads"); err != nil {
		return nil, err
	}
	for _, l := range []struct {
		s   string
		dst *[]int
	}{{ks, &c.ks}, {procs, &c.procs}, {ws, &c.ws}, {wsGo, &c.wsGo}} {
		if *l.dst, err = ints(l.s); err != nil {
			return nil, err
		}
	}
	if c.rounds < 1 || c.n < 1 || c.ops < 1 || c.warmup < 0 || c.warmupN < 0 || c.warmupTime < 0 || c.check < 0 {
		return nil, fmt.Errorf("--rounds, --n and --ops must be positive, --warmup, --warmup-n, --warmup-time and --check not negative")
	}
	for _, t := range []string{c.loadTree, c.lagTree} {
		if _, err := parseShape(t); err != nil {
			return nil, err
		}
	}
	if c.lagRate < 1 || c.lagTime <= 0 || c.instances < 1 || c.discRate < 1 || c.callTime <= 0 {
		return nil, fmt.Errorf("--lag-rate, --lag-time, --instances, --disc-rate and --call-time must be positive")
	}
	if c.check > 0 && c.checkHold <= 0 && c.hold <= 0 {
		return nil, fmt.Errorf("--check-hold must be positive: a checking pass that does not hold checks nothing")
	}
	if c.serverJVM != "production" && c.serverJVM != "test" {
		return nil, fmt.Errorf("--server-jvm %q: want production or test", c.serverJVM)
	}
	if err := driver.SetShortcutsOff(c.off); err != nil {
		return nil, fmt.Errorf("--off: %w", err)
	}
	os.Setenv(offEnv, c.off) // for the peer processes
	if c.latency != 0 && c.latency < minLatency {
		return nil, fmt.Errorf("--latency %v: want 0 or at least %v (the relay's timers are not finer: a shorter sleep of an idle Go process lasts about 1.1 ms)", c.latency, minLatency)
	}
	if c.ensemble < 1 {
		return nil, fmt.Errorf("--ensemble %d: want at least 1", c.ensemble)
	}
	return c, nil
}

func names(list string, known []string, flagName string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("%s: unknown %q (known: %s)", flagName, s, strings.Join(known, ","))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty", flagName)
	}
	return out, nil
}

func ints(list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q: want a positive number", s)
		}
		out = append(out, v)
	}
	return out, nil
}
