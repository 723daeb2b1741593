package main_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
)

// Group members in Curator's GroupMember layout (membershipPath/<id>,
// EPHEMERAL, unprotected, data = payload), made by raw creates of two
// sessions: inspect lists the group's members by id with their owning
// session and data size, in JSON and in the table.
func testGroup(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t) + "/membership"
	members := map[string]*framework.Client{"worker-1": newClient(t, e), "worker-2": newClient(t, e)}
	payload := map[string]string{"worker-1": "10.0.0.1:8080", "worker-2": "10.0.0.2:8080;zone=b"}
	for id, c := range members {
		if _, err := c.Create(ctx, p+"/"+id, []byte(payload[id]), framework.WithMode(framework.ModeEphemeral), framework.WithParentContainers()); err != nil {
			t.Fatal(err)
		}
	}
	r := recipeAt(t, e.snapshot(t, p), p, inspect.KindGroup)
	if got := paths(r.Members); !slices.Equal(got, []string{p + "/worker-1", p + "/worker-2"}) {
		t.Fatalf("members %v", got)
	}
	for _, m := range r.Members {
		checkEntry(t, m.Name, m, members[m.Name], m.Path)
		if m.Role != inspect.RoleMember || m.Data != payload[m.Name] || m.DataSize != len(payload[m.Name]) {
			t.Errorf("member %s: role %s data %q size %d, want its payload %q", m.Name, m.Role, m.Data, m.DataSize, payload[m.Name])
		}
	}
	table := e.ok(t, "inspect", p).stdout
	for _, want := range []string{p + "  group (GroupMember)  (2 members)", "member 2  worker-2  " + sessionOf(members["worker-2"]), "(20B) 10.0.0.2:8080;zone=b"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	// A member gone is gone from the group.
	if err := members["worker-1"].Close(); err != nil {
		t.Fatal(err)
	}
	r = recipeAt(t, e.snapshot(t, p), p, inspect.KindGroup)
	if got := paths(r.Members); !slices.Equal(got, []string{p + "/worker-2"}) {
		t.Errorf("members after worker-1's session closed: %v", got)
	}
}
