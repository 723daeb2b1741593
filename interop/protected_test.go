package interop_test

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

// Protected names (issue 14.5): Curator's ProtectedUtils and gocurator's
// IsProtected / ProtectedID / NormalizeName read every name the same way:
// each side's real lock nodes (both protected, a Curator and a gocurator
// participant of one lock) and names that only look protected (a "_c_"
// prefix without a UUID). Both need a real UUID after "_c_".
func testProtectedNames(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	peers := e.startPeers(t, 2)
	java, observer := peers[0], peers[1]
	c := newClient(t, e)
	p := e.path(t)
	jNode := java.must("mutex-acquire " + p + " 30000")
	m, _ := locks.NewMutex(c, p)
	got := async(func() error { return m.Lock(ctx) })
	awaitChildren(t, ctx, c, p, 2)
	var goNode string
	for _, k := range children(t, ctx, c, p) {
		if p+"/"+k != jNode {
			goNode = k
		}
	}
	const id = "5b3c2e1a-0000-4000-8000-00000000abcd"
	names := []string{
		framework.NodeName(jNode), goNode,
		"_c_" + id + "-lock-0000000001",
		"_c_" + strings.ToUpper(id) + "-lock-",
		"_c_" + strings.Repeat("x", 36) + "-lock-0000000001",
		"_c_" + id + "x-lock",
		"_c_" + id + "-",
		"lock-0000000001",
	}
	for i, name := range names {
		prot, pid := framework.IsProtected(name), "-"
		if id, ok := framework.ProtectedID(name); ok {
			pid = id
		}
		want := strings.Join([]string{boolStr(prot), pid, framework.NormalizeName(name)}, " ")
		if a := observer.must("protected " + name); a != want {
			t.Errorf("%q: Curator reads %q, gocurator %q", name, a, want)
		}
		if i < 2 && !prot {
			t.Errorf("lock node %q is not read as protected", name)
		}
	}
	java.must("mutex-release " + p)
	done(t, got, "gocurator's Lock once Curator released")
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
