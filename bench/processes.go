package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The processes workload: K processes of one session each contend for one
// mutex, the shape of K services sharing a lock (contended is K sessions
// in one process, where a library may share what it knows between them).
// Each process is a contended peer with --clients 1 and its share of the
// acquisitions, plus two things the processes share, both in a directory
// of the harness's:
//
//   - a start gate (--gate): a process that has warmed up makes a file
//     ready-<pid> there and waits for the file go; the harness makes go
//     once every process is ready, so that the timed parts run together
//     (a process that ends before go, a failure, opens it too: nobody
//     waits for ever);
//   - the holder counts (--shared): a file of sharedSlots counters mapped
//     by every process, one per part (warm-up, timed, checking pass), so
//     that two holders in two processes are seen together. The checking
//     pass runs in every process, one worker each.
//
// The harness adds the processes' results up (sumProcesses): the rate is
// every acquisition over the longest timed part, since they started
// together.

// sharedSlots: one holder count per part of a run (workloads.go).
const (
	slotWarm = iota
	slotTimed
	slotCheck
	sharedSlots
)

const (
	gateGo    = "go"
	gateReady = "ready-"
)

// gatePoll is how often a waiting process looks for the go file, and the
// harness for the ready ones.
const gatePoll = time.Millisecond

// runProcesses runs one processes job: K peer processes at once.
func (s *spawner) runProcesses(ctx context.Context, peer string, j job, round int, root string, z size) *Result {
	k := j.clients
	failed := func(err error) *Result {
		return &Result{Peer: peer, Workload: j.workload, Clients: k, Round: round, Exit: -1, Error: err.Error()}
	}
	dir, err := os.MkdirTemp("", "gocurator-bench-processes-")
	if err != nil {
		return failed(err)
	}
	defer os.RemoveAll(dir)
	shared := filepath.Join(dir, "holders")
	if err := os.WriteFile(shared, make([]byte, 4*sharedSlots), 0o600); err != nil {
		return failed(err)
	}
	child := job{workload: "contended", clients: 1}
	results := make([]*Result, k)
	var ended atomic.Bool // a process has ended (before the gate opened: it failed)
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		cz := size{ops: perProcess(z.ops, k, i), n: z.n, warmup: perProcess(z.warmup, k, i), check: perProcess(z.check, k, i)}
		go func() {
			defer wg.Done()
			results[i] = s.run(ctx, peer, child, round, root, cz, "--gate", dir, "--shared", shared)
			ended.Store(true)
		}()
	}
	openGate(ctx, dir, k, &ended)
	wg.Wait()
	return sumProcesses(peer, j, results)
}

// perProcess is process i's part of n acquisitions shared by k processes:
// together exactly n (so a warm-up of at least --warmup, as every other
// run's), but at least one each of something (a timed part of none would
// be no figure), and none of none (--check 0 checks nothing anywhere).
func perProcess(n, k, i int) int {
	if n == 0 {
		return 0
	}
	share := n / k
	if i < n%k {
		share++
	}
	return max(share, 1)
}

// openGate makes the go file once k processes are ready, or one has ended
// (or ctx has).
func openGate(ctx context.Context, dir string, k int, ended *atomic.Bool) {
	t := time.NewTicker(gatePoll)
	defer t.Stop()
	for ctx.Err() == nil && !ended.Load() {
		entries, _ := os.ReadDir(dir)
		ready := 0
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), gateReady) {
				ready++
			}
		}
		if ready >= k {
			break
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	if err := os.WriteFile(filepath.Join(dir, gateGo), nil, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "# opening the start gate: %v\n", err)
	}
}

// waitGate is a process's side of the start gate: ready, then wait for go
// (no longer than the stall guard's limit, which ends the process first).
func waitGate(dir string) {
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s%d", gateReady, os.Getpid())), nil, 0o600); err != nil {
		fail("start gate: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, gateGo)); err == nil {
			return
		} else if !errors.Is(err, os.ErrNotExist) {
			fail("start gate: %v", err)
		}
		time.Sleep(gatePoll)
	}
}

// sharedCounts maps the holder counts the processes share (--shared).
func sharedCounts(file string) *[sharedSlots]atomic.Int32 {
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		fail("--shared: %v", err)
	}
	defer f.Close() // the mapping outlives it
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4*sharedSlots, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		fail("--shared: mmap: %v", err)
	}
	// A page-aligned mapping: each 4-byte counter is aligned for atomic use.
	return (*[sharedSlots]atomic.Int32)(unsafe.Pointer(&mem[0]))
}

// sumProcesses adds up the results of one processes job: the rate over
// the longest timed part, the CPU per acquisition of them all, the peak
// RSS summed (the footprint of the K processes), the latency percentiles
// of the median process (p50) and the worst (p99). One process that
// failed, or broke exclusion, fails the job.
func sumProcesses(peer string, j job, rs []*Result) *Result {
	out := &Result{Peer: peer, Workload: j.workload, Clients: j.clients, Limit: 1}
	var cpu float64
	var errs []string
	var p50s []float64
	for _, r := range rs {
		out.Impl, out.Round = r.Impl, r.Round
		out.Ops += r.Ops
		out.WallS = max(out.WallS, r.WallS)
		out.ProcessS = max(out.ProcessS, r.ProcessS)
		cpu += r.CPUMsPerOp * float64(r.Ops)
		p50s = append(p50s, r.P50Ms)
		out.P99Ms = max(out.P99Ms, r.P99Ms)
		out.MaxHolders = max(out.MaxHolders, r.MaxHolders)
		out.Violations += r.Violations
		out.WarmupOps += r.WarmupOps
		out.WarmupS = max(out.WarmupS, r.WarmupS)
		out.Checked += r.Checked
		out.VmHWMKB += r.VmHWMKB
		if r.failed() {
			if out.Exit == 0 || r.Exit == exitViolation {
				out.Exit = r.Exit
			}
			errs = append(errs, r.Error)
		}
	}
	if out.Exit != 0 {
		out.Error = strings.Join(errs, "; ")
		return out
	}
	slices.Sort(p50s)
	out.P50Ms = p50s[len(p50s)/2]
	if out.WallS > 0 {
		out.OpsPerS = round3(float64(out.Ops) / out.WallS)
	}
	out.CPUMsPerOp = round3(cpu / float64(max(out.Ops, 1)))
	return out
}
