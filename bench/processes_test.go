package main

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// Two processes of a processes job map one file of holder counts: one
// holding in each at once is two holders, a violation, seen by the second
// to enter; holders of different parts (one process still warming up,
// another timed) are not.
func TestSharedHolderCounts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "holders")
	if err := os.WriteFile(file, make([]byte, 4*sharedSlots), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &config{shared: file}
	a, b := partHolders(c, 1), partHolders(c, 1) // two mappings, as two processes have

	a[slotWarm].enter("warm-up")
	b[slotTimed].enter("timed")
	if a[slotWarm].violations.Load()+b[slotTimed].violations.Load() != 0 {
		t.Fatal("holders of two parts counted together")
	}
	a[slotWarm].leave()
	b[slotTimed].leave()

	a[slotCheck].enter("check")
	b[slotCheck].enter("check")
	if got := b[slotCheck].violations.Load(); got != 1 {
		t.Fatalf("two holders in two mappings: %d violations, want 1", got)
	}
	if got := b[slotCheck].max.Load(); got != 2 {
		t.Fatalf("max holders %d, want 2", got)
	}
	b[slotCheck].leave()
	a[slotCheck].leave()
	if n := a[slotCheck].cur.Load(); n != 0 {
		t.Fatalf("count %d after both left", n)
	}
}

// The start gate opens once every process is ready, and at once when one
// has ended before it was (it failed): nobody waits for ever.
func TestStartGate(t *testing.T) {
	dir := t.TempDir()
	var ended atomic.Bool
	opened := make(chan struct{})
	go func() { openGate(context.Background(), dir, 2, &ended); close(opened) }()
	if err := os.WriteFile(filepath.Join(dir, gateReady+"other"), nil, 0o600); err != nil {
		t.Fatal(err) // the other process, ready
	}
	waitGate(dir) // this one: returns once the gate is open
	<-opened

	dir = t.TempDir()
	opened = make(chan struct{})
	ended.Store(true) // one of the two failed before it was ready
	go func() { openGate(context.Background(), dir, 2, &ended); close(opened) }()
	waitGate(dir)
	<-opened
	if _, err := os.Stat(filepath.Join(dir, gateGo)); err != nil {
		t.Fatal(err)
	}
}

// Two processes whose lock excludes nobody across them (the fake's state
// is each process's own), both holding at once, are a violation of the
// processes job: the shared holder counts see it. Each holding lasts
// 300 ms from the start gate on, so the two overlap unless one process
// stalls that long.
func TestViolationAcrossProcessesReported(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &config{hold: 300 * time.Millisecond, checkHold: time.Millisecond, stall: time.Minute, session: time.Second, timeout: time.Minute,
		peers: []string{"broken"}, workloads: []string{"processes"}}
	s := &spawner{c: c, self: self, connect: "127.0.0.1:1"}
	j := job{workload: "processes", clients: 2, peers: []string{"broken"}}
	r := s.run(context.Background(), "broken", j, 1, "/x", size{ops: 4, n: 1, check: 2})
	if r.Exit != exitViolation || r.Violations == 0 || r.MaxHolders < 2 {
		t.Errorf("exit %d, %d violations, max holders %d, error %q; want exit 3 with the violations", r.Exit, r.Violations, r.MaxHolders, r.Error)
	}
	if cell := rows(c, []job{j}, []*Result{r}, nil)[0].Cells["broken"]; cell.Status != "VIOLATION" {
		t.Errorf("table cell %+v, want VIOLATION", cell)
	}
}

func TestPerProcess(t *testing.T) {
	for _, c := range []struct{ n, k, sum, min int }{{2000, 4, 2000, 500}, {5, 2, 5, 2}, {7, 4, 7, 1}, {0, 4, 0, 0}, {3, 4, 4, 1}} {
		sum, least := 0, c.n
		for i := range c.k {
			p := perProcess(c.n, c.k, i)
			sum, least = sum+p, min(least, p)
		}
		if sum != c.sum || least != c.min {
			t.Errorf("%d over %d processes: %d in all, at least %d each; want %d and %d", c.n, c.k, sum, least, c.sum, c.min)
		}
	}
}

// sumProcesses: the rate over the longest timed part, CPU over every
// acquisition, memory summed; one failed process fails the job, and a
// violation in one makes it a violation.
func TestSumProcesses(t *testing.T) {
	j := job{workload: "processes", clients: 2}
	a := &Result{Peer: "p", Ops: 100, WallS: 1, CPUMsPerOp: 0.2, P50Ms: 1, P99Ms: 3, MaxHolders: 1, VmHWMKB: 10}
	b := &Result{Peer: "p", Ops: 100, WallS: 2, CPUMsPerOp: 0.4, P50Ms: 2, P99Ms: 5, MaxHolders: 1, VmHWMKB: 20}
	r := sumProcesses("p", j, []*Result{a, b})
	if r.failed() || r.Ops != 200 || r.OpsPerS != 100 || r.CPUMsPerOp != 0.3 || r.P99Ms != 5 || r.VmHWMKB != 30 || r.Clients != 2 || r.Workload != "processes" {
		t.Errorf("sum %+v", r)
	}
	bad := &Result{Peer: "p", Exit: exitViolation, Violations: 2, Error: "VIOLATION"}
	r = sumProcesses("p", j, []*Result{a, bad})
	if r.Exit != exitViolation || r.Violations != 2 || r.Error == "" {
		t.Errorf("with a violation: %+v", r)
	}
	failed := &Result{Peer: "p", Exit: 1, Error: "boom"}
	if r = sumProcesses("p", j, []*Result{failed, a}); r.Exit != 1 || r.Error != "boom" {
		t.Errorf("with a failure: %+v", r)
	}
}
