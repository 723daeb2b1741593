package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/testing/zktest"
)

// TestInterruptCleansUp: SIGINT or SIGTERM in the middle of a run kills the
// running peer at once and still removes what the harness made: its
// temporary directories (the local server's, the Java peer's classes) and,
// on a --connect server, the run's tree. The harness is this test binary
// again, as its peers are.
func TestInterruptCleansUp(t *testing.T) {
	peers := "gocurator"
	if p, err := buildCurator(context.Background()); err == nil {
		p.remove()
		peers += ",curator"
	}
	t.Run("local server, SIGINT", func(t *testing.T) {
		tmp := t.TempDir()
		interrupt(t, tmp, syscall.SIGINT, "--connect=", "--peers", peers)
		checkEmpty(t, tmp)
	})
	t.Run("external server, SIGTERM", func(t *testing.T) {
		srv := zktest.StartServer(t) // closed at cleanup; a server that cannot start fails the test
		tmp := t.TempDir()
		interrupt(t, tmp, syscall.SIGTERM, "--connect", srv.ConnectString(), "--peers", peers)
		checkEmpty(t, tmp)
		time.Sleep(time.Second) // a peer still running would make nodes again
		conn, _, err := zk.Connect([]string{srv.ConnectString()}, 5*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		kids, _, err := conn.Children("/")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			if k != "zookeeper" {
				t.Errorf("/%s left on the server after the interrupt", k)
			}
		}
	})
}

// interrupt starts the harness (tiny, one contended job whose warm-up
// lasts a minute) with TMPDIR=tmp, sends sig once the first peer runs, and
// checks it exits 130 well before that warm-up could have ended.
func interrupt(t *testing.T, tmp string, sig syscall.Signal, args ...string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--mode", "tiny", "--workloads", "contended", "--k", "2", "--warmup-time", "1m"}, args...)
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "TMPDIR="+tmp, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	started := make(chan struct{})
	var log strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "# cpus:") { // the last line before the first peer starts
				close(started)
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatal("the harness did not start its runs")
	}
	time.Sleep(2 * time.Second) // the first peer is in its warm-up
	t0 := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { <-done; exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(40 * time.Second):
		t.Fatalf("still running 40 s after %v:\n%s", sig, log.String())
	}
	t.Logf("exited %v after %v: %v\n%s", sig, time.Since(t0).Round(time.Millisecond), err, log.String())
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Errorf("exit %v, want status %d", err, exitInterrupted)
	}
	if !strings.Contains(log.String(), "interrupted") {
		t.Error("the harness did not say it was interrupted")
	}
}

func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind in TMPDIR: %s", e.Name())
	}
}
