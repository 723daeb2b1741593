package interop_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/nodes"
)

// goMembers renders a GroupMember's view as NodesCommands.java's.
func goMembers(g *nodes.GroupMember) string {
	m := g.Members()
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []string
	for _, id := range ids {
		out = append(out, id+"="+string(m[id]))
	}
	return strings.Join(out, ",")
}

// Go and Java (Curator's GroupMember) members of one group see each
// other join and leave; a Go member with an id a Java member holds is
// refused (Curator's two members would both adopt the node and flap).
func testGroupMember(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	java := e.startPeers(t, 1)[0]
	java.must(fmt.Sprintf("group-start %s j1 java-data", p))
	g, err := nodes.NewGroupMember(newClient(t, e), p, "g1", []byte("go-data"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	both := "g1=go-data,j1=java-data"
	eventually(t, "Go sees both", func() bool { return goMembers(g) == both }, func() string { return goMembers(g) })
	eventually(t, "Java sees both", func() bool { return java.must("group-members "+p) == both },
		func() string { return java.must("group-members " + p) })

	dup, err := nodes.NewGroupMember(newClient(t, e), p, "j1", []byte("impostor"))
	if err != nil {
		t.Fatal(err)
	}
	defer dup.Close()
	short, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := dup.Start(short); !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("a Go member with a Java member's id: %v, want ErrLocked", err)
	}
	if got := java.must("group-members " + p); got != both {
		t.Errorf("after the refused duplicate, Java sees %s", got)
	}

	java.must("group-close " + p)
	eventually(t, "Go sees the Java member leave", func() bool { return goMembers(g) == "g1=go-data" },
		func() string { return goMembers(g) })
	java.must(fmt.Sprintf("group-start %s j2 back", p))
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Java sees the Go member leave", func() bool { return java.must("group-members "+p) == "j2=back" },
		func() string { return java.must("group-members " + p) })
}
