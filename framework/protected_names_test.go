package framework_test

import (
	"errors"
	"fmt"
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

// Issue 38 item 5: a protected create directly under "/" works as in
// Curator, whatever its name, the empty one included: "/" with a
// sequential mode names the node by its sequence number alone, as "/a/"
// does under /a (protected: "/_c_<uuid>-0000000001", Curator's
// forPath("/") withProtection), inside the client's namespace or chroot;
// so does "/x" with every parent read. "/" in a mode that is not
// sequential names no node: refused.
func TestProtectedCreateDirectlyUnderRoot(t *testing.T) {
	ns := testenv.Uniq("rootprot")
	for _, tc := range []struct {
		name    string
		connect string
		opts    []framework.Option
	}{
		{"plain", testenv.Shared().ConnectString(), nil},
		{"namespace", testenv.Shared().ConnectString(), []framework.Option{framework.WithNamespace(ns)}},
		{"chroot", testenv.Shared().ConnectString() + "/" + ns + "-chroot", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.connect, tc.opts...)
			ctx := testenv.Ctx(t, testenv.WaitShort)
			first, err := c.Create(ctx, "/"+testenv.Uniq("first"), nil, framework.WithParents()) // makes the chroot
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, first); err != nil {
				t.Fatal(err)
			}
			made := func(what string, n framework.Created, err error) string {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if framework.ParentPath(n.Path) != "/" {
					t.Fatalf("%s made %q, not directly under /", what, n.Path)
				}
				if ok, _, err := c.Exists(ctx, n.Path); err != nil || !ok {
					t.Fatalf("%s: %q not there (%v)", what, n.Path, err)
				}
				if err := c.Delete(ctx, n.Path); err != nil {
					t.Fatal(err)
				}
				return framework.NodeName(n.Path)
			}
			for _, m := range []framework.CreateMode{framework.ModePersistentSequential, framework.ModeEphemeralSequential} {
				what := fmt.Sprintf("protected %s create of /", modeName(m))
				n, err := c.CreateNode(ctx, "/", nil, framework.WithProtection(), framework.WithMode(m), framework.WithParentStat())
				name := made(what, n, err)
				if !framework.IsProtected(name) || !isSequence(framework.NormalizeName(name)) {
					t.Fatalf("%s made %q, want _c_<uuid>-<sequence>", what, name)
				}
				if n.Parent == nil || n.Parent.NumChildren == 0 {
					t.Fatalf("%s: parent stat %+v, want the root's, counting the node", what, n.Parent)
				}
				what = fmt.Sprintf("%s create of /", modeName(m))
				n, err = c.CreateNode(ctx, "/", nil, framework.WithMode(m))
				if name := made(what, n, err); !isSequence(name) {
					t.Fatalf("%s made %q, want a sequence number alone", what, name)
				}
				what = fmt.Sprintf("Multi %s CreateOp of /", modeName(m))
				res, err := c.Multi(ctx, framework.CreateOp{Path: "/", Mode: m})
				if err == nil && len(res) == 1 {
					n = framework.Created{Path: res[0].Path}
				}
				if name := made(what, n, err); !isSequence(name) {
					t.Fatalf("%s made %q, want a sequence number alone", what, name)
				}
			}
			for _, o := range []framework.OpOption{framework.WithParentStat(),
				framework.WithParentChildren(), framework.WithParentContainers()} {
				n, err := c.CreateNode(ctx, "/"+testenv.Uniq("x"), nil, framework.WithProtection(),
					framework.WithMode(framework.ModeEphemeral), o)
				if name := made("protected create of /x", n, err); !framework.IsProtected(name) {
					t.Fatalf("protected create of /x made %q", name)
				}
			}
			for _, m := range []framework.CreateMode{framework.ModePersistent, framework.ModeEphemeral, framework.ModeContainer} {
				_, err := c.Create(ctx, "/", nil, framework.WithProtection(), framework.WithMode(m))
				if !errors.Is(err, curator.ErrInvalidPath) {
					t.Fatalf("protected create of / in mode %d: %v, want ErrInvalidPath", m, err)
				}
			}
		})
	}
	raw := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	for _, p := range []string{"/" + ns, "/" + ns + "-chroot"} {
		if err := raw.Delete(ctx, p, framework.WithChildren(), framework.WithIgnoreMissing()); err != nil {
			t.Fatal(err)
		}
	}
}

// isSequence reports whether s is a sequence number as ZooKeeper appends it.
func isSequence(s string) bool {
	if len(s) != 10 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
