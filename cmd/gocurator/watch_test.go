package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
)

// --watch --json prints a document per redraw, and a redraw follows a
// handoff: the holder unlocks, the first waiter holds, the listing says so.
// Ctrl-C ends it with exit status 0.
func testWatch(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	q := mutexQueue(t, e, p)

	cctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, binary, "inspect", "--watch", "--json", p, "--connect", e.srv.ConnectString())
	cmd.Env = withoutZKConnect(os.Environ())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	docs := make(chan *inspect.Snapshot, 1000)
	go func() {
		defer close(docs)
		dec := json.NewDecoder(stdout)
		for {
			var s inspect.Snapshot
			if err := dec.Decode(&s); err != nil {
				return
			}
			docs <- &s
		}
	}()
	exited := false
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Kill()
			for range docs {
			}
			cmd.Wait()
		}
	})
	n := 0
	await := func(what string, holder string, waiters []string) {
		t.Helper()
		timeout := time.After(eventTimeout)
		var last *inspect.Snapshot
		for {
			select {
			case s, ok := <-docs:
				if !ok {
					t.Fatalf("--watch ended before %s: %s", what, stderr.String())
				}
				n++
				last = s
				if len(s.Recipes) == 1 {
					r := s.Recipes[0]
					if slices.Equal(paths(r.Holders), []string{holder}) && slices.Equal(paths(r.Waiters), waiters) {
						return
					}
				}
			case <-timeout:
				t.Fatalf("--watch did not show %s in %v; last: %+v", what, eventTimeout, last)
			}
		}
	}
	await("the first queue", q.nodes[0], q.nodes[1:])
	if err := q.mutexes[0].Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	done(t, q.waits[1], "the first waiter's Lock after the unlock")
	await("the handoff", q.nodes[1], q.nodes[2:])

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range docs { // the redraws between, if any, then the end of output
		n++
	}
	err = cmd.Wait()
	exited = true
	if err != nil || cctx.Err() != nil {
		t.Fatalf("--watch after Ctrl-C: %v, want exit status 0\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "DATA RACE") {
		t.Errorf("--watch raced:\n%s", stderr.String())
	}
	t.Logf("%d redraws for one queue and one handoff", n)
}
