package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// brokenLib is a "library" whose locks exclude nobody and need no server:
// the checks must catch it, and the harness must report it.
type brokenLib struct{}

func (brokenLib) impl() string { return "broken" }
func (brokenLib) connect(context.Context, string, time.Duration) (session, error) {
	return brokenSession{}, nil
}

type brokenSession struct{}

func (brokenSession) mutex(string) (locker, error)                  { return noLock{}, nil }
func (brokenSession) rwlock(string) (rwLocker, error)               { return noRW{}, nil }
func (brokenSession) children(context.Context, string) (int, error) { return 0, nil }
func (brokenSession) close()                                        {}
func (brokenSession) semaphore(string, int) (leaser, error) {
	return noLease{}, nil
}

type noLock struct{}

func (noLock) lock(context.Context) error   { return nil }
func (noLock) unlock(context.Context) error { return nil }

type noLease struct{}

func (noLease) acquire(context.Context) (func(context.Context) error, error) {
	return func(context.Context) error { return nil }, nil
}

type noRW struct{}

func (noRW) read() locker  { return noLock{} }
func (noRW) write() locker { return noLock{} }

// TestChecksCatchOverlaps: with locks that do not lock and a hold long
// enough to overlap, every workload's checker counts violations.
func TestChecksCatchOverlaps(t *testing.T) {
	for _, w := range []string{"contended", "semaphore", "rwlock"} {
		c := &config{peer: "broken", workload: w, clients: 8, ops: 80, root: "/x", hold: 5 * time.Millisecond}
		var r *Result
		switch w {
		case "contended":
			r = exclusive(c, brokenLib{}, 8, c.ops, 1, mutexAcquirer)
		case "semaphore":
			r = exclusive(c, brokenLib{}, 8, c.ops, semaphoreLeases, semaphoreAcquirer)
		case "rwlock":
			r = rwlockWL(c, brokenLib{}, 8, c.ops)
		}
		if r.Violations == 0 {
			t.Errorf("%s: no violation counted with a lock that excludes nobody (max holders %d)", w, r.MaxHolders)
		}
	}
}

// TestViolationReported: a peer process that finds a violation exits 3,
// and the harness shows VIOLATION, not a figure.
func TestViolationReported(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &config{hold: 5 * time.Millisecond, stall: time.Minute, session: time.Second, timeout: time.Minute,
		peers: []string{"broken"}, workloads: []string{"contended"}}
	s := &spawner{c: c, self: self, connect: "unused:1"}
	j := job{workload: "contended", clients: 8, peers: []string{"broken"}}
	r := s.run("broken", j, 1, "/x", 80, 1, 0)
	if r.Exit != exitViolation || r.Violations == 0 || !strings.Contains(r.Error, "VIOLATION") {
		t.Fatalf("exit %d, %d violations, error %q; want exit 3 with the violations", r.Exit, r.Violations, r.Error)
	}
	rs := rows(c, []job{j}, []*Result{r}, nil)
	if len(rs) != 1 || rs[0].Cells["broken"].Status != "VIOLATION" {
		t.Fatalf("table rows %+v: want the cell VIOLATION", rs)
	}
}
