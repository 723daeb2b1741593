package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/gocurator/curator/internal/driver"
)

// profileEnv, set to a file name, has a Go peer process write a CPU
// profile of its whole run there (issue 16: profile before and after each
// change, on the workload the table measures).
const profileEnv = "GOCURATOR_BENCH_CPUPROFILE"

// offEnv names gocurator's engine shortcuts turned off (--off), for the
// peer processes.
const offEnv = "GOCURATOR_BENCH_OFF"

// peerMain is one peer process of a Go peer: one workload, one JSON line of
// results on stdout, the exit status telling how it went (measure.go).
// The curator peer is the same thing in Java (curator/Bench.java).
func peerMain(c *config, stdout io.Writer) int {
	lib, ok := goLibraries[c.peer]
	if !ok {
		fmt.Fprintf(os.Stderr, "--peer %q: not a Go peer\n", c.peer)
		return exitUsage
	}
	if c.connect == "" || c.root == "" || c.clients < 1 {
		fmt.Fprintln(os.Stderr, "a peer needs --connect, --root and --clients")
		return exitUsage
	}
	if !supports(c.peer, c.workload) {
		fmt.Fprintf(os.Stderr, "%s has no recipe for %s\n", c.peer, c.workload)
		return exitUsage
	}
	if err := driver.SetShortcutsOff(os.Getenv(offEnv)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return exitUsage
	}
	if f := os.Getenv(profileEnv); f != "" {
		stop, err := startProfile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return exitError
		}
		defer stop()
	}
	stallGuard(c.stall, func() string { return fmt.Sprintf("%s %s %d", c.peer, c.workload, c.clients) })
	var r *Result
	switch c.workload {
	case "uncontended":
		r = exclusive(c, lib, 1, c.n, 1, mutexAcquirer)
	case "contended":
		r = exclusive(c, lib, c.clients, c.ops, 1, mutexAcquirer)
	case "semaphore":
		r = exclusive(c, lib, c.clients, c.ops, semaphoreLeases, semaphoreAcquirer)
	case "rwlock":
		r = rwlockWL(c, lib, c.clients, c.ops)
	case "waiters":
		r = waitersWL(c, lib, c.clients)
	case "cacheload":
		r = cacheLoadWL(c, lib)
	case "cachelag":
		r = cacheLagWL(c, lib)
	case discoveryQuery:
		r = discoveryQueryWL(c, lib)
	case discoveryLag:
		r = discoveryLagWL(c, lib)
	case "atomic":
		r = atomicWL(c, lib, c.clients, c.ops)
	case "queue":
		r = queueWL(c, lib, c.clients, c.ops)
	default:
		fmt.Fprintf(os.Stderr, "--workload %q: unknown\n", c.workload)
		return exitUsage
	}
	b, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return exitError
	}
	fmt.Fprintf(stdout, "%s\n", b)
	if r.Violations > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d violations\n", r.Violations)
		return exitViolation
	}
	return exitOK
}

// startProfile starts a CPU profile written to file; stop ends it.
func startProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
