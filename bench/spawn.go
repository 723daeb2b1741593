package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childEnv marks a peer process started by the harness; the test binary
// (bench_test.go) looks at it, since it is the binary re-executed there.
const childEnv = "GOCURATOR_BENCH_CHILD"

// spawner starts peer processes: the Go peers are this binary again, the
// curator peer is the JVM.
type spawner struct {
	c       *config
	connect string
	self    string       // this executable
	curator *curatorPeer // nil when unavailable
	kazoo   *kazooPeer   // nil when unavailable or not used
	trees   cacheTrees   // the cache workloads' (cache.go)

	disc discoveryRegistry // the discovery workloads' (discovery.go)
}

// ms and us give a duration as both peers parse it (Bench.java: ms or us).
func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
func us(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) + "us" }

// size is how much a peer process does: the timed part (ops, or n for
// uncontended), the warm-up before it (at least warmup acquisitions and
// --warmup-time), the checking pass after it.
type size struct{ ops, n, warmup, check int }

// run runs one peer process for one job (the processes job: K of them,
// processes.go) and returns its result; a process that failed gives a
// Result with Exit and Error set. extra are more flags for the process.
// When ctx ends, the process is killed and the result says so.
func (s *spawner) run(ctx context.Context, peer string, j job, round int, root string, z size, extra ...string) *Result {
	switch j.workload {
	case "processes":
		return s.runProcesses(ctx, peer, j, round, root, z)
	case "cachelag":
		return s.runCacheLag(ctx, peer, j, round, z)
	case "cacheload":
		root = s.trees.load // one tree for every run, made once
	case discoveryLag:
		return s.runDiscoveryLag(ctx, peer, j, round, z)
	case discoveryQuery:
		root = s.disc.base // one registry for every run
	}
	return s.spawn(ctx, peer, j, round, root, z, extra...)
}

// spawn runs one peer process (run's body).
func (s *spawner) spawn(ctx context.Context, peer string, j job, round int, root string, z size, extra ...string) *Result {
	args := []string{"--peer", peer, "--workload", j.workload, "--clients", strconv.Itoa(j.clients),
		"--connect", s.connect, "--root", root, "--n", strconv.Itoa(z.n), "--ops", strconv.Itoa(z.ops),
		"--warmup", strconv.Itoa(z.warmup), "--warmup-time", ms(s.c.warmupTime), "--check", strconv.Itoa(z.check),
		"--hold", us(s.c.hold), "--check-hold", us(s.c.checkHold), "--stall", ms(s.c.stall),
		"--session-timeout", ms(s.c.session)}
	switch j.workload {
	case "cacheload":
		args = append(args, "--tree", s.c.loadTree)
	case "cachelag":
		args = append(args, "--tree", s.c.lagTree)
	case discoveryQuery:
		args = append(args, "--call-time", ms(s.c.callTime))
	}
	if j.variant != "" {
		args = append(args, "--variant", j.variant)
	}
	args = append(args, extra...)
	var cmd *exec.Cmd
	switch peer {
	case "curator":
		cmd = s.curator.command(s.c.javaOpts, args)
	case "kazoo":
		cmd = s.kazoo.command(args)
	default:
		cmd = exec.Command(s.self, args...)
	}
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// its own process group, killed with us (Linux), past the timeout and
	// on an interrupt (ctx)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	t0 := time.Now()
	err := cmd.Start()
	if err == nil {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var limit <-chan time.Time // none with --timeout 0
		if s.c.timeout > 0 {
			limit = time.After(s.c.timeout)
		}
		select {
		case err = <-done:
		case <-limit:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			err = fmt.Errorf("killed after --timeout %v", s.c.timeout)
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			err = fmt.Errorf("killed: %w", errInterrupted)
		}
	}
	r := &Result{Peer: peer, Workload: j.workload, Clients: j.clients, Variant: j.variant}
	if line := lastJSONLine(stdout.Bytes()); line != nil {
		if pr, perr := parseResult(line); perr == nil {
			r = pr
		} else if err == nil {
			err = perr
		}
	}
	// A peer that let two in usually fails next (the loser's release
	// finds its lock lost) or stalls, and exits before its result line:
	// the VIOLATION lines it printed still count.
	if n := int64(bytes.Count(stderr.Bytes(), []byte("VIOLATION: "))); n > r.Violations {
		r.Violations = n
	}
	r.Round, r.ProcessS = round, round3(time.Since(t0).Seconds())
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.Exit = exit.ExitCode()
		r.Error = fmt.Sprintf("exit status %d (%s): %s", r.Exit, exitMeaning(r.Exit), tail(stderr.String(), 6))
	case err != nil:
		r.Exit = -1
		r.Error = fmt.Sprintf("%v: %s", err, tail(stderr.String(), 6))
	case r.Ops == 0:
		r.Exit = -1
		r.Error = "no result line: " + tail(stderr.String(), 6)
	}
	return r
}

func exitMeaning(code int) string {
	switch code {
	case exitViolation:
		return "VIOLATION"
	case exitStall:
		return "stalled"
	case exitUsage:
		return "usage"
	}
	return "error"
}

func lastJSONLine(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if l := bytes.TrimSpace(lines[i]); bytes.HasPrefix(l, []byte("{")) {
			return l
		}
	}
	return nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
