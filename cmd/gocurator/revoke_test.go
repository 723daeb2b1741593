package main_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/locks"
)

// revoke reaches a holder that armed revocation, and the listing shows the
// request in the holder's node until it lets go.
func testRevoke(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	revoked := make(chan struct{})
	var once sync.Once
	m, err := locks.NewMutex(newClient(t, e), p, locks.WithRevocation(func(context.Context) { once.Do(func() { close(revoked) }) }))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	r := e.ok(t, "revoke", m.Node())
	if !strings.Contains(r.stdout, "revocation requested") || !strings.Contains(r.stdout, m.Node()) || !regexp.MustCompile(`role:\s+holder`).MatchString(r.stdout) {
		t.Errorf("revoke said:\n%s", r)
	}
	select {
	case <-revoked:
	case <-time.After(eventTimeout):
		t.Fatalf("the holder armed with WithRevocation heard nothing in %v", eventTimeout)
	}
	h := recipeAt(t, e.snapshot(t, p), p, inspect.KindMutex).Holders[0]
	if h.Data != "__REVOKE__" || len(h.Notes) == 0 || !strings.Contains(h.Notes[0], "revocation requested") {
		t.Errorf("holder after revoke: data %q notes %v", h.Data, h.Notes)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// revoke tells the operator when there is nothing to revoke, and will not
// overwrite the data of a node that is no lock's contender unless --any.
func testRevokeRefusals(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	r := e.run(t, "revoke", p+"/_c_00000000-0000-4000-8000-000000000000-lock-0000000001")
	if r.code != 1 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("revoke of a missing node: %s; want exit 1 and \"does not exist\"", r)
	}
	c := newClient(t, e)
	if _, err := c.Create(ctx, p+"/config", []byte("keep me"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	r = e.run(t, "revoke", p+"/config")
	if r.code != 1 || !strings.Contains(r.stderr, "refusing") {
		t.Errorf("revoke of a plain node: %s; want exit 1 and a refusal", r)
	}
	if data, _, _ := c.Get(ctx, p+"/config"); string(data) != "keep me" {
		t.Errorf("a refused revoke wrote %q", data)
	}
	e.ok(t, "revoke", "--any", p+"/config")
	if data, _, _ := c.Get(ctx, p+"/config"); string(data) != "__REVOKE__" {
		t.Errorf("revoke --any left %q", data)
	}
	// A LeaderSelector's node has the mutex layout, and its data is the
	// participant id that Leader and Participants report: not overwritten
	// without --any.
	leading := make(chan struct{})
	s, err := leader.NewSelector(c, p+"/election", "node-a:8080", func(ctx context.Context) error {
		close(leading)
		<-ctx.Done()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-leading:
	case <-ctx.Done():
		t.Fatal("the selector never led")
	}
	r = e.run(t, "revoke", s.Node())
	if r.code != 1 || !strings.Contains(r.stderr, "LeaderSelector") {
		t.Errorf("revoke of a selector's node: %s; want exit 1 and a refusal naming LeaderSelector", r)
	}
	if l, err := s.Leader(ctx); err != nil || l.ID != "node-a:8080" {
		t.Errorf("leader after a refused revoke: %+v, %v", l, err)
	}
}
