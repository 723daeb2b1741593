// Command bench compares gocurator's lock recipes side by side with
// go-zookeeper's zk.Lock and Apache Curator 5.4 (Java), its Cache with
// Curator's CuratorCache and TreeCache, and its service discovery with
// curator-x-discovery's, and its queue with Curator's DistributedQueue and
// kazoo's Queue and LockingQueue (Python), on one ZooKeeper server,
// reproducibly from this repository alone:
//
//	go run ./bench [--mode quick|full] [--rounds 3] [--json FILE]   (make bench-peers: --mode full)
//
// It starts one local ZooKeeper 3.8 (testing/zktest; or uses --connect /
// ZK_CONNECT), compiles the Java peer (curator/*.java) against Debian's
// Curator jars, and runs every workload once per round for each peer,
// peers interleaved, each run in a process of its own (this binary again,
// or the JVM) that prints one JSON line, so that peak RSS and CPU are the
// peer's own. It prints, per workload, each peer's median and spread over
// the rounds and gocurator's ratio to the others; --json keeps every raw
// result. Every run but uncontended ends with a checking pass, not timed
// (--check acquisitions holding --check-hold each: at the published --hold
// 0 the holder counts of the timed part would miss two holders at once).
// Exit status: 3 if any run broke mutual exclusion (or a bound), 1 if any
// run failed, 130 if interrupted (SIGINT or SIGTERM: the running peer is
// killed, then the temporary directories, the local server and, on a
// --connect server, the run's tree are removed; a second signal ends at
// once), else 0. A peer that cannot run on this machine (the curator peer
// without Java or Curator's jars, GOCURATOR_NO_CURATOR=1 for make's
// install step; the kazoo peer without a python3 that imports kazoo,
// GOCURATOR_NO_KAZOO=1) is left out on purpose, not a failure: its columns say
// unavailable, the last line says why and how to install it, and the
// status stays 0.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usageText = `Runs the workloads uncontended, contended (K sessions), semaphore (3 leases),
rwlock (90% reads), processes (K processes of one session each), waiters (W
contenders on one session), cpu (CPU per acquisition), cacheload (a cache's
first load of a 10,000-node tree: time and peak RSS) and cachelag (the lag of a
cache's events under 1,000 changes/s: p50, p99), discoveryquery (a service's
instances read from ZooKeeper, from a cache, from a provider: ops/s) and
discoverylag (the lag from a registration to a discovery cache: p50, p99),
atomic (K sessions incrementing one counter: increments/s, the count checked
exact) and queue (K producer and K consumer sessions on one queue, with a lock
path, at least once, and without, at most once: items/s put and taken end to
end, puts/s, put-to-take p50; every item checked taken exactly once) for the
peers gocurator, gozk (go-zookeeper zk.Lock; no cache, no discovery, no
counter, no queue), curator (Apache Curator 5.4, Java: CuratorCache and
TreeCache, curator-x-discovery, DistributedAtomicLong, DistributedQueue) and
kazoo (python3-kazoo's Queue and LockingQueue: the queue workload alone),
against one ZooKeeper server.

Exit status: 3 if a run broke mutual exclusion (or a bound, or lost or doubled
an item or an increment), 1 if a run failed, 130 if interrupted, else 0; a peer
unavailable on this machine (no Java or Curator jars; no python3 with kazoo) is
left out with a note, status 0.`

func main() {
	os.Exit(mainArgs(os.Args[1:], os.Stdout, os.Stderr))
}

func mainArgs(args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	if c.peer != "" {
		return peerMain(c, stdout)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second signal ends the process at once
	rep, err := harness(ctx, c, stdout, stderr)
	if errors.Is(err, errInterrupted) {
		fmt.Fprintln(stderr, "bench: interrupted; cleaned up")
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return exitError
	}
	for _, p := range allPeers {
		if why := rep.Unavailable[p]; why != "" {
			fmt.Fprintf(stderr, "bench: NOTE: the %s peer did not run (UNAVAILABLE: %s); its columns are empty. Not a failure: the exit status ignores it.\n", p, why)
		}
	}
	switch {
	case rep.Violations > 0:
		return exitViolation
	case rep.Failures > 0:
		return exitError
	}
	return exitOK
}
