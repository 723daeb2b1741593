// The tests of the gocurator command build the binary once (with -race
// when the tests run with it) and run it against a real ZooKeeper
// (testing/zktest) on which Go holders and waiters stand in line: they
// check what an operator would see, in --json (and the table's shape).
// Waits are on conditions with generous deadlines, never fixed sleeps.
package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/testing/zktest"
)

// binary is the gocurator command built for the tests.
var binary string

// Deadlines: generous, the machine is a loaded 2-core one running -race.
const (
	testTimeout  = 4 * time.Minute // one test: its testenv.Ctx, which also ends with it
	cmdTimeout   = 2 * time.Minute // one run of the command
	eventTimeout = time.Minute     // anything we wait to see happen
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(withBinary{m}) }

// withBinary builds the command into a temporary directory, then runs the
// tests, so that goleak looks for goroutines after them.
type withBinary struct{ m *testing.M }

func (w withBinary) Run() int {
	dir, err := os.MkdirTemp("", "gocurator-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return w.m.Run()
}

// build compiles this package's command into dir.
func build(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the tests build the command, and go is not on PATH: %w", err)
	}
	bin := filepath.Join(dir, "gocurator")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command(goTool, append(args, ".")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// result is one run of the command.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// gocurator runs the command with args, stdin as its input and env added
// to (and overriding ZK_CONNECT of) the test's environment. It fails the
// test if the command hangs or races.
func gocurator(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(withoutZKConnect(os.Environ()), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("gocurator %s: still running after %v\n%s", strings.Join(args, " "), cmdTimeout, r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running gocurator: %v", err)
	}
	if strings.Contains(r.stderr, "DATA RACE") {
		t.Errorf("gocurator %s raced:\n%s", strings.Join(args, " "), r.stderr)
	}
	return r
}

func withoutZKConnect(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(s string) bool { return strings.HasPrefix(s, "ZK_CONNECT=") })
}

// env is what the subtests of TestCLI share: one server.
type env struct {
	srv *zktest.Server
	seq atomic.Int64
}

// path returns a fresh path for one test.
func (e *env) path(t *testing.T) string {
	return fmt.Sprintf("/cli/%s-%d", strings.ReplaceAll(t.Name(), "/", "."), e.seq.Add(1))
}

// run runs the command against the shared server (--connect last: flags
// may follow the arguments).
func (e *env) run(t *testing.T, args ...string) result {
	t.Helper()
	return gocurator(t, "", nil, append(args, "--connect", e.srv.ConnectString())...)
}

// ok runs the command and fails unless it exits 0.
func (e *env) ok(t *testing.T, args ...string) result {
	t.Helper()
	r := e.run(t, args...)
	if r.code != 0 {
		t.Fatalf("gocurator %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// snapshot runs inspect --json on path (more flags in flags).
func (e *env) snapshot(t *testing.T, path string, flags ...string) *inspect.Snapshot {
	t.Helper()
	r := e.ok(t, append([]string{"inspect", "--json", path}, flags...)...)
	var s inspect.Snapshot
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("inspect --json printed no JSON document: %v\n%s", err, r)
	}
	return &s
}

// TestCLI runs the scenarios that share one server.
func TestCLI(t *testing.T) {
	e := &env{srv: zktest.StartServer(t)}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"Mutex", testMutex},
		{"MutexTable", testMutexTable},
		{"ReadWrite", testReadWrite},
		{"Semaphore", testSemaphore},
		{"LeaderLatch", testLeaderLatch},
		{"Group", testGroup},
		{"Queue", testQueue},
		{"Services", testServices},
		{"InspectService", testInspectService},
		{"ServicesErrors", testServicesErrors},
		{"Namespace", testNamespace},
		{"ConnectFromEnv", testConnectFromEnv},
		{"Watch", testWatch},
		{"WatchEvents", testWatchEvents},
		{"WatchOptions", testWatchOptions},
		{"WatchSessionLoss", testWatchSessionLoss},
		{"Revoke", testRevoke},
		{"RevokeRefusals", testRevokeRefusals},
		{"Release", testRelease},
		{"ReleaseAsks", testReleaseAsks},
		{"ReleaseInterrupted", testReleaseInterrupted},
		{"ReleaseLostReply", testReleaseLostReply},
		{"ReleaseRefusals", testReleaseRefusals},
		{"MissingPath", testMissingPath},
		{"PermissionDenied", testPermissionDenied},
		{"Usage", testUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, e)
		})
	}
}

// ---- Go holders and waiters ----

// newClient connects a client of its own session, closed at cleanup.
func newClient(t *testing.T, e *env, opts ...framework.Option) *framework.Client {
	t.Helper()
	c, err := framework.New(e.srv.ConnectString(), append([]framework.Option{framework.WithSessionTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// async runs f on a goroutine; its result comes on the channel.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// done waits for an async call to return nil.
func done(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(eventTimeout):
		t.Fatalf("%s: not done in %v", what, eventTimeout)
	}
}

// enqueued returns a callback for WithOnEnqueue and a wait for its node.
func enqueued() (func(string), func(t *testing.T) string) {
	ch := make(chan string, 16)
	return func(n string) { ch <- n }, func(t *testing.T) string {
		t.Helper()
		select {
		case n := <-ch:
			return n
		case <-time.After(eventTimeout):
			t.Fatalf("no node enqueued in %v", eventTimeout)
			return ""
		}
	}
}

// eventually polls cond until it holds; describe says what was seen last.
func eventually(t *testing.T, what string, cond func() bool, describe func() string) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen in %v (last: %s)", what, eventTimeout, describe())
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronization
	}
}

// stat returns a node's stat.
func stat(t *testing.T, c *framework.Client, node string) *framework.Stat {
	t.Helper()
	ok, st, err := c.Exists(context.Background(), node)
	if err != nil || !ok {
		t.Fatalf("exists %s: %v %v", node, ok, err)
	}
	return st
}

// sessionOf is how the command prints c's session.
func sessionOf(c *framework.Client) string { return inspect.SessionHex(c.Session().ID()) }

// recipeAt returns the one recipe of kind at path.
func recipeAt(t *testing.T, s *inspect.Snapshot, path string, kind inspect.Kind) inspect.Recipe {
	t.Helper()
	var all []string
	for _, r := range s.Recipes {
		if r.Path == path && r.Kind == kind {
			return r
		}
		all = append(all, r.Path+"="+string(r.Kind))
	}
	t.Fatalf("no %s at %s; recipes: %v", kind, path, all)
	return inspect.Recipe{}
}

func paths(es []inspect.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

// checkEntry checks one listed node against the client that made it.
func checkEntry(t *testing.T, what string, e inspect.Entry, c *framework.Client, node string) {
	t.Helper()
	st := stat(t, c, node)
	if e.Path != node || e.Name != framework.NodeName(node) {
		t.Errorf("%s: listed %s, want %s", what, e.Path, node)
	}
	if want := sessionOf(c); e.Session != want {
		t.Errorf("%s: session %s, want %s (its client's)", what, e.Session, want)
	}
	if e.Token != st.Czxid || e.TokenHex != fmt.Sprintf("0x%x", st.Czxid) {
		t.Errorf("%s: token %d (%s), want the node's czxid %d", what, e.Token, e.TokenHex, st.Czxid)
	}
	if e.AgeMillis < 0 || e.Ctime.IsZero() {
		t.Errorf("%s: age %d ms, ctime %v", what, e.AgeMillis, e.Ctime)
	}
}
