package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// release --force --yes deletes a stuck holder's node, and the first
// waiter then acquires.
func testRelease(t *testing.T, e *env) {
	p := e.path(t)
	q := mutexQueue(t, e, p)
	r := e.ok(t, "release", q.nodes[0], "--force", "--yes")
	if !strings.Contains(r.stdout, "deleted "+q.nodes[0]) || !strings.Contains(r.stdout, sessionOf(q.clients[0])) {
		t.Errorf("release said:\n%s", r)
	}
	done(t, q.waits[1], "the first waiter's Lock after the release")
	if q.mutexes[1].Node() != q.nodes[1] {
		t.Errorf("the first waiter holds with %s, queued as %s", q.mutexes[1].Node(), q.nodes[1])
	}
	rec := recipeAt(t, e.snapshot(t, p), p, inspect.KindMutex)
	if !slices.Equal(paths(rec.Holders), q.nodes[1:2]) || !slices.Equal(paths(rec.Waiters), q.nodes[2:]) {
		t.Errorf("after the release: holders %v waiters %v", paths(rec.Holders), paths(rec.Waiters))
	}
}

// Without --yes, release shows the node and deletes only on "yes".
func testReleaseAsks(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	c, m := heldMutex(t, e)
	args := []string{"release", "--force", m.Node(), "--connect", e.srv.ConnectString()}
	r := gocurator(t, "no\n", nil, args...)
	if r.code != 1 || !strings.Contains(r.stdout, "type yes") {
		t.Errorf("release answered no: %s; want the question and exit 1", r)
	}
	for _, want := range []string{"node:", m.Node(), "session:", sessionOf(c), "age:", "data:", string(c.DefaultData()), "role:", "holder"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("release did not show %q before asking:\n%s", want, r.stdout)
		}
	}
	if ok, _, _ := c.Exists(ctx, m.Node()); !ok {
		t.Fatal("release deleted the node although told no")
	}
	if r := gocurator(t, "", nil, args...); r.code != 1 {
		t.Errorf("release with no answer (end of input): %s; want exit 1", r)
	}
	if r := gocurator(t, "yes\n", nil, args...); r.code != 0 || !strings.Contains(r.stdout, "deleted") {
		t.Errorf("release answered yes: %s", r)
	}
	if ok, _, _ := c.Exists(ctx, m.Node()); ok {
		t.Error("release answered yes left the node")
	}
}

// release refuses without --force, and a node that is no recipe's
// contender unless --any; a missing node is an error.
func testReleaseRefusals(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	c := newClient(t, e)
	if _, err := c.Create(ctx, p+"/config", []byte("x"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	exists := func() bool { ok, _, _ := c.Exists(context.Background(), p+"/config"); return ok }
	if r := e.run(t, "release", p+"/config", "--yes"); r.code != 2 || !strings.Contains(r.stderr, "--force") {
		t.Errorf("release without --force: %s; want exit 2 naming --force", r)
	}
	if r := e.run(t, "release", p+"/config", "--force", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "--any") {
		t.Errorf("release of a plain node: %s; want exit 1 naming --any", r)
	}
	if !exists() {
		t.Fatal("a refused release deleted the node")
	}
	e.ok(t, "release", p+"/config", "--force", "--yes", "--any")
	if exists() {
		t.Error("release --any left the node")
	}
	if r := e.run(t, "release", p+"/config", "--force", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("release of a missing node: %s", r)
	}
	// A persistent record named by a UUID is no double barrier's member
	// (those are ephemeral), whatever its name.
	record := p + "/users/0f8fad5b-d9cb-469f-a165-70867728950e"
	if _, err := c.Create(ctx, record, []byte(`{"name":"alice"}`), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, "release", record, "--force", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "--any") {
		t.Errorf("release of a persistent UUID-named record: %s; want exit 1 naming --any", r)
	}
	if ok, _, _ := c.Exists(ctx, record); !ok {
		t.Error("a refused release deleted the record")
	}
}

// A delete whose reply is lost is not sent again (the retry would find the
// node gone and say its holder released it): release looks, and says that
// it deleted the node.
func testReleaseLostReply(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	c, m := heldMutex(t, e)
	p := zktest.StartProxy(t, e.srv.Addr())
	h := p.HoldReply(zktest.OpDelete)
	done := make(chan result, 1)
	go func() { done <- gocurator(t, "", nil, "release", "--force", "--yes", m.Node(), "--connect", p.Addr()) }()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drop()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("release never ended")
	}
	if ok, _, err := c.Exists(ctx, m.Node()); err != nil || ok {
		t.Fatalf("the node after a release whose delete reply was lost: exists %v, %v", ok, err)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "deleted "+m.Node()) || strings.Contains(r.stdout, "nothing deleted") {
		t.Errorf("release whose delete reply was lost: %s; want exit 0 and \"deleted %s\"", r, m.Node())
	}
}

// Ctrl-C at release's question ends it at once: exit 1, nothing deleted
// (reading the answer does not keep the command from hearing the signal).
func testReleaseInterrupted(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	c, m := heldMutex(t, e)
	cctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, binary, "release", "--force", m.Node(), "--connect", e.srv.ConnectString())
	cmd.Env = withoutZKConnect(os.Environ())
	stdin, err := cmd.StdinPipe() // open, never answered
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var out, stderr bytes.Buffer
	asked := make(chan struct{})
	cmd.Stdout = &signalWriter{w: &out, want: "type yes to confirm", seen: asked}
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-cctx.Done():
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("release did not ask: %s %s", out.String(), stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if cctx.Err() != nil || !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("release interrupted at its question: %v, stderr %q; want exit 1 and \"interrupted\", at once", err, stderr.String())
	}
	if ok, _, _ := c.Exists(ctx, m.Node()); !ok {
		t.Fatal("an interrupted release deleted the node")
	}
}

// signalWriter passes writes on and closes seen once want has been
// written (the command is at that point).
type signalWriter struct {
	mu   sync.Mutex
	w    *bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (s *signalWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	if strings.Contains(s.w.String(), s.want) {
		s.once.Do(func() { close(s.seen) })
	}
	return n, err
}

// heldMutex is a mutex on a path of its own, held by a client of its own.
func heldMutex(t *testing.T, e *env) (*framework.Client, *locks.Mutex) {
	t.Helper()
	c := newClient(t, e)
	m, err := locks.NewMutex(c, e.path(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(testenv.Ctx(t, testTimeout)); err != nil {
		t.Fatal(err)
	}
	return c, m
}
