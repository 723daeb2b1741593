package framework_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gocurator/curator"
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
			if !errors.Is(err, curator.ErrInvalidPath) {
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
var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func FuzzProtectedName(f *testing.F) {
	f.Add("lock-", "5b3c2e1a-0000-4000-8000-000000000000")
	f.Add("__READ__0000000001", "")
	f.Add("", "x")
	f.Add("_c_5b3c2e1a-0000-4000-8000-000000000000-lease-0000000002", "short")
	// 36 characters, but not a UUID: not protected, as in Curator.
	f.Add("_c_"+strings.Repeat("x", 36)+"-lock-0000000001", "5b3c2e1a00000-4000-8000-00000000000")
	f.Add("_c_5B3C2E1A-0000-4000-8000-00000000000F-lease-", "5b3c2e1a-0000-4000-8000-00000000000g")
	f.Fuzz(func(t *testing.T, name, id string) {
		if framework.IsProtected(name) {
			got, ok := framework.ProtectedID(name)
			if !ok || framework.ProtectedName(got, framework.NormalizeName(name)) != name {
				t.Fatalf("%q does not round-trip", name)
			}
		} else if framework.NormalizeName(name) != name {
			t.Fatalf("unprotected %q normalized to %q", name, framework.NormalizeName(name))
		}
		if name != "" {
			// With a UUID for id, the name is protected and round-trips;
			// with anything else, it is protected only if id itself
			// starts with a UUID and a "-" (checked above).
			p := framework.ProtectedName(id, name)
			got, ok := framework.ProtectedID(p)
			if uuid := uuidRE.MatchString(id); (uuid && (!ok || got != id || framework.NormalizeName(p) != name)) ||
				(!uuid && ok && !uuidRE.MatchString(got)) {
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
			if !errors.Is(err, curator.ErrInvalidArgument) && !errors.Is(err, curator.ErrInvalidPath) {
				t.Fatalf("%q: untyped error %v", s, err)
			}
			return
		}
		c.Close()
	})
}
