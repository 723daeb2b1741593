package framework_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// Only a real UUID (8-4-4-4-12 hex) after "_c_" makes a name protected, as
// in Curator's ProtectedUtils: a user's node that merely starts with "_c_"
// keeps its name.
func TestProtectedNameNeedsUUID(t *testing.T) {
	const id = "5b3c2e1a-0000-4000-8000-00000000abcd"
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"_c_" + id + "-lock-0000000001", true},
		{"_c_" + strings.ToUpper(id) + "-x", true},
		{"_c_" + id + "-", false}, // nothing after the prefix
		{"_c_" + strings.Repeat("x", 36) + "-lock", false},
		{"_c_5b3c2e1a-0000-4000-8000-00000000abcdX-lock", false},
		{"_c_5b3c2e1a00000-4000-8000-00000000abcd-lock", false},
		{"_c_5b3c2e1a-0000-4000-8000-00000000abc-g-lock", false},
		{"_c_5b3c2e1a+0000-4000-8000-00000000abcd-lock", false},
		{"lock-0000000001", false},
	} {
		if got := framework.IsProtected(tc.name); got != tc.want {
			t.Errorf("IsProtected(%q) = %v, want %v", tc.name, got, tc.want)
		}
		gotID, ok := framework.ProtectedID(tc.name)
		if ok != tc.want || (ok && !strings.EqualFold(gotID, id)) {
			t.Errorf("ProtectedID(%q) = %q, %v", tc.name, gotID, ok)
		}
		if norm := framework.NormalizeName(tc.name); tc.want == (norm == tc.name) {
			t.Errorf("NormalizeName(%q) = %q", tc.name, norm)
		}
	}
}

// A sequential path may end in "/" (the server names the node by its
// sequence number alone), but an empty component inside it is as invalid
// as anywhere: it is refused before any I/O.
func TestSequentialEmptyComponent(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("seqempty")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	for _, p := range []string{"/a//b", "//b", "/a//"} {
		_, err := c.Create(ctx, p, nil, framework.WithMode(framework.ModePersistentSequential), framework.WithParents())
		if !errors.Is(err, curator.ErrInvalidPath) {
			t.Errorf("sequential create %q: %v, want ErrInvalidPath", p, err)
		}
	}
	if ok, _, err := c.Exists(ctx, "/a"); err != nil || ok {
		t.Fatalf("a refused create made /a: %v %v", ok, err)
	}
}

// Sequential and protected creates directly under "/" work, with and
// without a namespace, as ZooKeeper allows /_c_<uuid>-name0000000001.
func TestCreateUnderRoot(t *testing.T) {
	for _, ns := range []string{"", testenv.Uniq("rootns")} {
		c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
		ctx := testenv.Ctx(t, testenv.WaitShort)
		for _, tc := range []struct {
			path string
			opts []framework.OpOption
		}{
			{"/" + testenv.Uniq("seq") + "-", []framework.OpOption{framework.WithMode(framework.ModeEphemeralSequential)}},
			{"/" + testenv.Uniq("prot"), []framework.OpOption{framework.WithProtection(), framework.WithMode(framework.ModeEphemeral)}},
			{"/" + testenv.Uniq("protseq") + "-", []framework.OpOption{framework.WithProtection(), framework.WithMode(framework.ModeEphemeralSequential)}},
		} {
			p, err := c.Create(ctx, tc.path, nil, tc.opts...)
			if err != nil {
				t.Fatalf("ns %q: create %q: %v", ns, tc.path, err)
			}
			if framework.ParentPath(p) != "/" {
				t.Fatalf("ns %q: create %q made %q", ns, tc.path, p)
			}
			if ok, _, err := c.Exists(ctx, p); err != nil || !ok {
				t.Fatalf("ns %q: %q not there: %v", ns, p, err)
			}
			if err := c.Delete(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
}
