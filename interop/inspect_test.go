package interop_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

// buildCLI builds cmd/gocurator into t.TempDir().
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gocurator")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/gocurator/curator/cmd/gocurator").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/gocurator: %v\n%s", err, out)
	}
	return bin
}

// runCLI runs the gocurator command against the test server.
func runCLI(t *testing.T, e *env, bin string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append(args, "--connect", e.zk.ConnectString(), "--timeout", "60s")...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gocurator %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// gocurator inspect sees a mixed queue as both languages do: an
// InterProcessMutex holder, then a gocurator waiter and a Curator waiter
// in the order they queued, with their sessions and fencing tokens, and
// the Curator holder's data as Curator wrote it (its default: the local
// address).
func testInspect(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	bin := buildCLI(t)
	peers := e.startPeers(t, 2)
	holder, waiter := peers[0], peers[1]
	c := newClient(t, e)
	p := e.path(t)

	javaHolder := holder.must("mutex-acquire " + p + " 30000")
	enq := make(chan string, 1)
	m, err := locks.NewMutex(c, p, locks.WithOnEnqueue(func(n string) { enq <- n }))
	if err != nil {
		t.Fatal(err)
	}
	got := async(func() error { return m.Lock(ctx) })
	var goWaiter string
	select {
	case goWaiter = <-enq:
	case <-time.After(eventTimeout):
		t.Fatal("gocurator's waiter did not queue")
	}
	ans := waiter.send("mutex-acquire " + p + " 120000")
	kids := awaitChildren(t, ctx, c, p, 3)
	var javaWaiter string
	for _, k := range kids {
		if n := framework.JoinPath(p, k); n != javaHolder && n != goWaiter {
			javaWaiter = n
		}
	}
	queue := []string{javaHolder, goWaiter, javaWaiter}

	var s inspect.Snapshot
	if err := json.Unmarshal([]byte(runCLI(t, e, bin, "inspect", "--json", p)), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Recipes) != 1 || s.Recipes[0].Kind != inspect.KindMutex {
		t.Fatalf("recipes %+v, want one mutex", s.Recipes)
	}
	r := s.Recipes[0]
	var listed []string
	for _, e := range append(slices.Clone(r.Holders), r.Waiters...) {
		listed = append(listed, e.Path)
	}
	if len(r.Holders) != 1 || !slices.Equal(listed, queue) {
		t.Fatalf("holders %d, queue %v; want Curator's holder, gocurator's waiter, Curator's waiter: %v", len(r.Holders), listed, queue)
	}
	for i, entry := range append(slices.Clone(r.Holders), r.Waiters...) {
		_, st, err := c.Get(ctx, queue[i])
		if err != nil {
			t.Fatal(err)
		}
		if entry.Session != inspect.SessionHex(st.EphemeralOwner) || entry.Token != st.Czxid {
			t.Errorf("%s: session %s token %d; the node's owner is %s, czxid %d",
				queue[i], entry.Session, entry.Token, inspect.SessionHex(st.EphemeralOwner), st.Czxid)
		}
	}
	if r.Waiters[0].Session != inspect.SessionHex(c.Session().ID()) {
		t.Errorf("gocurator's waiter listed in session %s, its client's is 0x%x", r.Waiters[0].Session, c.Session().ID())
	}
	wrote := holder.must("localaddress")
	if h := r.Holders[0]; h.Data != wrote || h.DataEncoding != "text" {
		t.Errorf("Curator holder's data %q (%s), Curator writes %q", h.Data, h.DataEncoding, wrote)
	}
	t.Logf("gocurator inspect %s:\n%s", p, runCLI(t, e, bin, "inspect", p))

	holder.must("mutex-release " + p)
	done(t, got, "gocurator's Lock once Curator's holder released")
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := waiter.ok(ans, "mutex-acquire"); n != javaWaiter {
		t.Fatalf("Curator's waiter holds with %s, queued as %s", n, javaWaiter)
	}
	waiter.must("mutex-release " + p)
}
