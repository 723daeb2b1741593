package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLib is a "library" that needs no server: its locks admit up to admit
// holders at once (0: everyone; 1: a working lock), each acquisition and
// release costing rtt, as a round trip to a server would. Lock objects on
// one path share the path's state whatever their session, and children
// counts the path's contenders (queued or holding), as the waiters
// workload expects of a real lock's nodes.
type fakeLib struct {
	admit int
	rtt   time.Duration
	lose  bool // a release beside another holder fails, as a real lock's loser's does
	mu    sync.Mutex
	paths map[string]*fakePath
}

type fakePath struct {
	sem        chan struct{} // nil: admits everyone
	contenders atomic.Int64
	holding    atomic.Int64
}

func newFakeLib(admit int, rtt time.Duration) *fakeLib {
	return &fakeLib{admit: admit, rtt: rtt, paths: map[string]*fakePath{}}
}

func (l *fakeLib) path(p string) *fakePath {
	l.mu.Lock()
	defer l.mu.Unlock()
	fp := l.paths[p]
	if fp == nil {
		fp = &fakePath{}
		if l.admit > 0 {
			fp.sem = make(chan struct{}, l.admit)
		}
		l.paths[p] = fp
	}
	return fp
}

func (l *fakeLib) impl() string { return "fake" }
func (l *fakeLib) connect(context.Context, string, time.Duration) (session, error) {
	return fakeSession{l}, nil
}

type fakeSession struct{ l *fakeLib }

func (s fakeSession) mutex(p string) (locker, error) { return fakeLock{s.l, s.l.path(p)}, nil }
func (s fakeSession) rwlock(p string) (rwLocker, error) {
	return fakeRW{fakeLock{s.l, s.l.path(p)}}, nil
}
func (s fakeSession) children(_ context.Context, p string) (int, error) {
	return int(s.l.path(p).contenders.Load()), nil
}
func (fakeSession) close() {}
func (s fakeSession) semaphore(p string, _ int) (leaser, error) {
	return fakeLease{fakeLock{s.l, s.l.path(p)}}, nil
}

type fakeLock struct {
	l *fakeLib
	p *fakePath
}

func (f fakeLock) lock(context.Context) error {
	f.p.contenders.Add(1)
	if f.p.sem != nil {
		f.p.sem <- struct{}{}
	}
	sleep(f.l.rtt) // the reply's way back
	f.p.holding.Add(1)
	return nil
}

func (f fakeLock) unlock(context.Context) error {
	sleep(f.l.rtt) // the delete's way to the server
	others := f.p.holding.Add(-1)
	if f.p.sem != nil {
		<-f.p.sem
	}
	f.p.contenders.Add(-1)
	if others > 0 && f.l.lose {
		// The overlap is seen here, not always by the workload's counts
		// (at --hold 0 they are raised for a few atomic operations): say
		// so the way a peer does, then fail as a real loser's release.
		fmt.Fprintf(os.Stderr, "VIOLATION: fake: released beside %d other holders\n", others)
		return errors.New("lock lost")
	}
	return nil
}

// fakeLease: a semaphore of admit leases, the way fakeLock admits holders.
type fakeLease struct{ fakeLock }

func (f fakeLease) acquire(ctx context.Context) (func(context.Context) error, error) {
	if err := f.lock(ctx); err != nil {
		return nil, err
	}
	return f.unlock, nil
}

// fakeRW: readers and writers alike take the one fake lock, so that a
// lock admitting two lets a reader in beside a writer.
type fakeRW struct{ fakeLock }

func (f fakeRW) read() locker  { return f.fakeLock }
func (f fakeRW) write() locker { return f.fakeLock }

// runFake runs workload w at the published settings (--hold 0, the
// checking pass of the full preset) on a fake library.
func runFake(t *testing.T, lib *fakeLib, w string, clients, ops int) *Result {
	t.Helper()
	c := &config{peer: "fake", workload: w, clients: clients, ops: ops, n: ops, root: "/x",
		connect: "127.0.0.1:1", check: 300, checkHold: time.Millisecond, stall: time.Minute}
	switch w {
	case "contended":
		return exclusive(c, lib, clients, ops, 1, mutexAcquirer)
	case "semaphore":
		return exclusive(c, lib, clients, ops, semaphoreLeases, semaphoreAcquirer)
	case "rwlock":
		return rwlockWL(c, lib, clients, ops)
	case "waiters":
		return waitersWL(c, lib, clients)
	}
	t.Fatalf("workload %q", w)
	return nil
}

// TestChecksCatchTwoHoldersAtHoldZero (found by review): a lock that admits
// TWO holders at once, with 300 µs round trips as a real one, ran 2,000
// acquisitions at the default --hold 0 with no violation counted: the
// holder counts were raised for a few atomic operations. The checking pass
// must catch it; a working lock of the same costs must pass.
func TestChecksCatchTwoHoldersAtHoldZero(t *testing.T) {
	for _, w := range []string{"contended", "rwlock"} {
		r := runFake(t, newFakeLib(2, 300*time.Microsecond), w, 4, 200)
		t.Logf("%s, admits 2: %d ops, %d checked, %d violations, max holders %d", w, r.Ops, r.Checked, r.Violations, r.MaxHolders)
		if r.Violations == 0 || r.Checked == 0 {
			t.Errorf("%s: %d violations (%d acquisitions checked) with a lock admitting two holders at --hold 0", w, r.Violations, r.Checked)
		}
		ok := runFake(t, newFakeLib(1, 300*time.Microsecond), w, 4, 200)
		if ok.Violations != 0 || ok.Ops != 200 || ok.Checked != 300 {
			t.Errorf("%s: a working lock gave %d violations, %d ops, %d checked", w, ok.Violations, ok.Ops, ok.Checked)
		}
	}
	// the semaphore's bound is 3 leases: a semaphore admitting 4
	if r := runFake(t, newFakeLib(semaphoreLeases+1, 300*time.Microsecond), "semaphore", 8, 500); r.Violations == 0 {
		t.Errorf("semaphore: no violation with %d leases out of %d at --hold 0", semaphoreLeases+1, semaphoreLeases)
	}
	if r := runFake(t, newFakeLib(semaphoreLeases, 300*time.Microsecond), "semaphore", 8, 500); r.Violations != 0 {
		t.Errorf("semaphore: a working one gave %d violations", r.Violations)
	}
}

// TestChecksCatchOverlaps: with locks that exclude nobody, at the default
// --hold 0, every workload's checker counts violations, the waiters' too.
func TestChecksCatchOverlaps(t *testing.T) {
	for _, w := range []string{"contended", "semaphore", "rwlock", "waiters"} {
		r := runFake(t, newFakeLib(0, 0), w, 8, 80)
		if r.Violations == 0 {
			t.Errorf("%s: no violation counted with a lock that excludes nobody (max holders %d)", w, r.MaxHolders)
		}
	}
}

// TestWaitersCheck: the waiters workload (one session, W lock objects
// queued behind a holder) counts two holders at once, and a working lock
// passes it with every handoff and the checking pass made.
func TestWaitersCheck(t *testing.T) {
	r := runFake(t, newFakeLib(2, 300*time.Microsecond), "waiters", 50, 0)
	if r.Violations == 0 {
		t.Errorf("waiters: no violation with a lock admitting two holders (max holders %d)", r.MaxHolders)
	}
	ok := runFake(t, newFakeLib(1, 300*time.Microsecond), "waiters", 50, 0)
	if ok.Violations != 0 || ok.Ops != 50 || ok.Checked != 50 || ok.MaxHolders != 1 {
		t.Errorf("waiters, a working lock: %d violations, %d handoffs, %d checked, max holders %d; want 0, 50, 50, 1",
			ok.Violations, ok.Ops, ok.Checked, ok.MaxHolders)
	}
}

// TestViolationReported: a peer process that finds a violation exits 3,
// and the harness shows VIOLATION, not a figure; at the default --hold 0.
func TestViolationReported(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &config{checkHold: time.Millisecond, stall: time.Minute, session: time.Second, timeout: time.Minute,
		peers: []string{"broken"}, workloads: []string{"contended", "waiters"}}
	s := &spawner{c: c, self: self, connect: "127.0.0.1:1"}
	var jobs []job
	var results []*Result
	for _, j := range []job{{workload: "contended", clients: 8}, {workload: "waiters", clients: 20}} {
		j.peers = []string{"broken"}
		r := s.run(context.Background(), "broken", j, 1, "/x", size{ops: 80, n: 1, check: 100})
		if r.Exit != exitViolation || r.Violations == 0 || !strings.Contains(r.Error, "VIOLATION") {
			t.Errorf("%s: exit %d, %d violations, error %q; want exit 3 with the violations", j.workload, r.Exit, r.Violations, r.Error)
		}
		jobs, results = append(jobs, j), append(results, r)
	}
	for _, r := range rows(c, jobs, results, nil) {
		if r.Cells["broken"].Status != "VIOLATION" {
			t.Errorf("table row %s %s %s: %+v, want the cell VIOLATION", r.Workload, r.Param, r.Unit, r.Cells["broken"])
		}
	}
}

// A peer that lets two in and then fails (the loser's release finds its
// lock lost, as a real lock's does) exits 1 before its result line: its
// run is still a violation, not a failure (found by review: it was counted
// a failure, and the table said FAIL).
func TestViolationThenFailureReported(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &config{checkHold: time.Millisecond, stall: time.Minute, session: time.Second, timeout: time.Minute,
		peers: []string{"brokenloses"}, workloads: []string{"contended"}}
	s := &spawner{c: c, self: self, connect: "127.0.0.1:1"}
	j := job{workload: "contended", clients: 8, peers: []string{"brokenloses"}}
	r := s.run(context.Background(), "brokenloses", j, 1, "/x", size{ops: 80, n: 1, check: 100})
	if r.Exit != exitError || r.Violations == 0 {
		t.Errorf("exit %d, %d violations, error %q; want exit 1 (the failed release) with the violations counted", r.Exit, r.Violations, r.Error)
	}
	if cell := rows(c, []job{j}, []*Result{r}, nil)[0].Cells["brokenloses"]; cell.Status != "VIOLATION" {
		t.Errorf("table cell %+v, want VIOLATION", cell)
	}
}
