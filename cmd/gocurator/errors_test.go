package main_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
)

// A path that does not exist: exit 1, said so, with or without --watch.
func testMissingPath(t *testing.T, e *env) {
	p := e.path(t)
	for _, args := range [][]string{{"inspect", p}, {"inspect", "--watch", p}, {"inspect", "--json", p}} {
		if r := e.run(t, args...); r.code != 1 || !strings.Contains(r.stderr, p+" does not exist") || r.stdout != "" {
			t.Errorf("gocurator %s: %s; want exit 1 and \"%s does not exist\"", strings.Join(args, " "), r, p)
		}
	}
}

// A node whose ACL refuses the command: exit 1 naming --auth; below the
// path, the rest is listed and the command exits 3; --auth lets it read.
func testPermissionDenied(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	owner := newClient(t, e, framework.WithAuth("digest", []byte("ops:s3cret")))
	if _, err := owner.Create(ctx, p+"/open", []byte("x"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create(ctx, p+"/secret", nil, framework.WithACL(zk.DigestACL(zk.PermAll, "ops", "s3cret")...)); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create(ctx, p+"/secret/count", []byte{0, 0, 0, 7}); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "inspect", p+"/secret")
	if r.code != 1 || !strings.Contains(r.stderr, "permission denied") || !strings.Contains(r.stderr, "--auth") {
		t.Errorf("inspect of a node the ACL refuses: %s; want exit 1, \"permission denied\" and --auth", r)
	}
	r = e.run(t, "inspect", p)
	if r.code != 3 || !strings.Contains(r.stdout, p+"/open  barrier or plain node") || !strings.Contains(r.stdout, "unreadable") || !strings.Contains(r.stdout, p+"/secret") {
		t.Errorf("inspect above a node the ACL refuses: %s; want the rest listed, the node named, exit 3", r)
	}
	s := e.snapshot(t, p+"/secret", "--auth", "digest:ops:s3cret")
	if r := recipeAt(t, s, p+"/secret/count", inspect.KindSharedCount); r.Count == nil || *r.Count != 7 {
		t.Errorf("with --auth: %+v", r)
	}
}

// Bad command lines: exit 2 and a hint; help: exit 0 on stdout.
func testUsage(t *testing.T, e *env) {
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout (code 0) or stderr
	}{
		{nil, 2, "usage:"},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"help"}, 0, "gocurator inspect [--watch] [--json] PATH"},
		{[]string{"--help"}, 0, "gocurator release --force"},
		{[]string{"help", "release"}, 0, "usage: gocurator release [flags] NODE"},
		{[]string{"help", "nope"}, 2, "unknown command"},
		{[]string{"inspect", "-h"}, 0, "usage: gocurator inspect [flags] PATH"},
		{[]string{"revoke", "--help"}, 0, "__REVOKE__"},
		{[]string{"inspect"}, 2, "want 1 argument"},
		{[]string{"inspect", "/a", "/b"}, 2, "want 1 argument"},
		{[]string{"inspect", "relative"}, 2, "must start with /"},
		{[]string{"inspect", "--bogus", "/a"}, 2, "flag provided but not defined"},
		{[]string{"inspect", "/a", "--timeout", "0s"}, 2, "--timeout"},
		{[]string{"inspect", "/a", "--timeout", "soon"}, 2, "invalid value"},
		{[]string{"inspect", "/a", "--auth", "digest"}, 2, "scheme:credentials"},
		{[]string{"inspect", "/a", "--tls-cert", "c.pem"}, 2, "go together"},
		{[]string{"inspect", "/a", "--tls-ca", "/nonexistent/ca.pem"}, 2, "--tls-ca"},
		{[]string{"inspect", "/a", "--max-nodes", "0"}, 2, "--max-nodes"},
		{[]string{"inspect", "/a/", "--connect", e.srv.ConnectString()}, 2, "invalid path"},
		{[]string{"release", "/a", "--connect", e.srv.ConnectString()}, 2, "--force"},
		{[]string{"inspect", "/a", "--connect", "127.0.0.1:99999"}, 2, "bad --connect"},
		{[]string{"inspect", "/a", "--connect", "no-such-host.invalid:2181"}, 1, "cannot connect"}, // the network, not a typo
		{[]string{"inspect", "/a", "--connect", e.srv.ConnectString(), "--namespace", "a//b"}, 2, "--namespace"},
	} {
		r := gocurator(t, "", nil, tc.args...)
		where := r.stderr
		if tc.code == 0 {
			where = r.stdout
		}
		if r.code != tc.code || !strings.Contains(where, tc.out) {
			t.Errorf("gocurator %s: %s\nwant exit %d and %q", strings.Join(tc.args, " "), r, tc.code, tc.out)
		}
	}
}

// An unreachable server: a clear error within --timeout, never a hang;
// neither a closed port nor a server that accepts and never answers.
func TestUnreachable(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() { // accepts, reads, never answers
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	for _, addr := range []string{closedAddr, silent.Addr().String()} {
		for _, cmd := range [][]string{{"inspect", "/"}, {"inspect", "--watch", "/"}, {"revoke", "/x"}, {"release", "--force", "--yes", "/x"}} {
			start := time.Now()
			r := gocurator(t, "", nil, append(cmd, "--connect", addr, "--timeout", "2s")...)
			if r.code != 1 || !strings.Contains(r.stderr, "cannot connect to ZooKeeper at "+addr+" within 2s") {
				t.Errorf("gocurator %v at %s: %s; want exit 1 and \"cannot connect\"", cmd, addr, r)
			}
			if d := time.Since(start); d > 45*time.Second {
				t.Errorf("gocurator %v at %s took %v with --timeout 2s", cmd, addr, d)
			}
		}
	}
}
