package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocurator/curator/testing/zktest"
)

// TestCuratorUnavailableNotAFailure: without Java (here: no javac on PATH)
// the curator peer is left out, the last line says so and how to install
// it, and the exit status stays 0, as documented.
func TestCuratorUnavailableNotAFailure(t *testing.T) {
	srv := zktest.StartServer(t) // closed at cleanup; a server that cannot start fails the test
	t.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	t.Setenv("PATH", t.TempDir()) // no javac, no java
	var out, log bytes.Buffer
	code := mainArgs([]string{"--mode", "tiny", "--connect", srv.ConnectString(), "--peers", "gocurator,curator",
		"--workloads", "contended", "--k", "2"}, &out, &log)
	t.Logf("stderr:\n%s\nstdout:\n%s", log.String(), out.String())
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if last := lines[len(lines)-1]; code != exitOK || !strings.Contains(last, "curator peer did not run") ||
		!strings.Contains(last, "javac not found; install with: apt-get install") {
		t.Errorf("exit %d, last line %q; want 0 and a note saying why and how to install", code, last)
	}
	if !strings.Contains(out.String(), "unavailable") {
		t.Error("the table does not say the curator peer was unavailable")
	}
}

// TestKazooUnavailableNotAFailure: without a python3 that imports kazoo
// the kazoo peer is left out of the queue workload, as the curator peer
// without Java: a note saying why and how to install it, status 0.
func TestKazooUnavailableNotAFailure(t *testing.T) {
	srv := zktest.StartServer(t)
	t.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	saved := pythonCandidates
	pythonCandidates = []string{filepath.Join(t.TempDir(), "no-python3")}
	t.Cleanup(func() { pythonCandidates = saved })
	var out, log bytes.Buffer
	code := mainArgs([]string{"--mode", "tiny", "--connect", srv.ConnectString(), "--peers", "gocurator,kazoo",
		"--workloads", "queue", "--k", "2"}, &out, &log)
	t.Logf("stderr:\n%s\nstdout:\n%s", log.String(), out.String())
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if last := lines[len(lines)-1]; code != exitOK || !strings.Contains(last, "kazoo peer did not run") ||
		!strings.Contains(last, "install with: apt-get install -y python3-kazoo") {
		t.Errorf("exit %d, last line %q; want 0 and a note saying why and how to install", code, last)
	}
	if !strings.Contains(out.String(), "unavailable") {
		t.Error("the table does not say the kazoo peer was unavailable")
	}
}
