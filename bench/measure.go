package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cpuTime is the user+system CPU time of this process so far (getrusage).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procStatus reads a number field (VmHWM, VmRSS in kB, Threads) of
// /proc/self/status; -1 if absent.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			if f := strings.Fields(v); len(f) > 0 {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n
				}
			}
		}
	}
	return -1
}

// progress counts what a workload gets done (acquisitions, queued
// waiters); the stall guard fails the process when it stops moving.
var progress atomic.Int64

// stallGuard exits the process with status 4 when progress has not moved
// for d: a lock that never comes back (go-zookeeper's Lock takes no
// context, and no library should hang the harness) fails the run.
func stallGuard(d time.Duration, what func() string) {
	go func() {
		last, since := progress.Load(), time.Now()
		for range time.Tick(min(d/10, time.Second)) {
			if p := progress.Load(); p != last {
				last, since = p, time.Now()
			} else if time.Since(since) > d {
				fmt.Fprintf(os.Stderr, "STALL: no progress for %v (%s)%s\n", d, what(), dumpGoroutines())
				os.Exit(exitStall)
			}
		}
	}()
}

// dumpGoroutines writes every goroutine's stack to a new file in the
// temporary directory, for the post-mortem of a stall (a recipe that
// hangs: the STALL line, in the run's error, names the file), and says
// where; "" if it could not.
func dumpGoroutines() string {
	f, err := os.CreateTemp("", "gocurator-bench-stall-*.txt")
	if err != nil {
		return ""
	}
	defer f.Close()
	if err := pprof.Lookup("goroutine").WriteTo(f, 2); err != nil {
		return ""
	}
	return "; goroutines in " + f.Name()
}

// Exit statuses of a peer process.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitViolation = 3 // mutual exclusion, the semaphore bound or the read/write rule broken
	exitStall     = 4

	exitInterrupted = 130 // the harness, on SIGINT or SIGTERM
)
