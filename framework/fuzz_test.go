package framework_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gocurator/curator/framework"
)

// FuzzValidatePath: never panics; what it accepts is absolute, has no empty,
// "." or ".." component and no NUL; what it rejects wraps ErrInvalidPath.
func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{"/", "/a", "/a/b", "", "a", "/a/", "//", "/a//b", "/./a", "/a/..", "/a\x00", "/\u0001", "/\ud7ff", "/\ufff0", "/zookeeper", "/_c_x-lock-0000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := framework.ValidatePath(p)
		if err != nil {
			if !errors.Is(err, framework.ErrInvalidPath) {
				t.Fatalf("%q: error %v does not wrap ErrInvalidPath", p, err)
			}
			return
		}
		if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) || !utf8.ValidString(p) {
			t.Fatalf("accepted %q", p)
		}
		if p == "/" {
			return
		}
		for _, part := range strings.Split(p[1:], "/") {
			if part == "" || part == "." || part == ".." {
				t.Fatalf("accepted %q with component %q", p, part)
			}
		}
		// Joining a valid child keeps it valid; parent and name split it back.
		child := framework.JoinPath(p, "c")
		if framework.ValidatePath(child) != nil || framework.ParentPath(child) != p || framework.NodeName(child) != "c" {
			t.Fatalf("join/split of %q broke: %q", p, child)
		}
	})
}

// FuzzProtectedName: a protected name always round-trips; anything else
// never panics and normalizes to a suffix of itself.
func FuzzProtectedName(f *testing.F) {
	f.Add("lock-", "5b3c2e1a-0000-4000-8000-000000000000")
	f.Add("__READ__0000000001", "")
	f.Add("", "x")
	f.Add("_c_5b3c2e1a-0000-4000-8000-000000000000-lease-0000000002", "short")
	f.Fuzz(func(t *testing.T, name, id string) {
		if framework.IsProtected(name) {
			got, ok := framework.ProtectedID(name)
			if !ok || framework.ProtectedName(got, framework.NormalizeName(name)) != name {
				t.Fatalf("%q does not round-trip", name)
			}
		} else if framework.NormalizeName(name) != name {
			t.Fatalf("unprotected %q normalized to %q", name, framework.NormalizeName(name))
		}
		if len(id) == 36 && name != "" {
			p := framework.ProtectedName(id, name)
			got, ok := framework.ProtectedID(p)
			if !ok || got != id || framework.NormalizeName(p) != name {
				t.Fatalf("ProtectedName(%q, %q) = %q: id %q ok %v normalized %q", id, name, p, got, ok, framework.NormalizeName(p))
			}
		}
		if fresh := framework.NewProtectedID(); len(fresh) != 36 {
			t.Fatalf("NewProtectedID %q", fresh)
		}
	})
}

// FuzzConnectString: New never panics on a connect string; it either
// rejects it (ErrInvalidArgument or ErrInvalidPath) or returns a client.
func FuzzConnectString(f *testing.F) {
	for _, s := range []string{"127.0.0.1:1", "a:1,b:2/chroot", "", ",", "h:0", "h:99999", "/x", "h:1/", "h:1//x", "[::1]:2181", "h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := framework.New(s)
		if err != nil {
			if !errors.Is(err, framework.ErrInvalidArgument) && !errors.Is(err, framework.ErrInvalidPath) {
				t.Fatalf("%q: untyped error %v", s, err)
			}
			return
		}
		c.Close()
	})
}
