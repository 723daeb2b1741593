package framework_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// Every call takes and returns the caller's paths; the server sees them
// below chroot + namespace.
func TestNamespaceAndChrootRoundTrip(t *testing.T) {
	chroot, ns := "/"+testenv.Uniq("chroot")+"/deeper", testenv.Uniq("ns")
	for _, tc := range []struct {
		name, connect, ns, prefix string
	}{
		{"namespace", testenv.Shared().ConnectString(), ns, "/" + ns},
		{"chroot", testenv.Shared().ConnectString() + chroot, "", chroot},
		{"chroot+namespace", testenv.Shared().ConnectString() + chroot, ns, chroot + "/" + ns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []framework.Option
			if tc.ns != "" {
				opts = append(opts, framework.WithNamespace(tc.ns))
			}
			c := newClient(t, tc.connect, opts...)
			raw := newClient(t, testenv.Shared().ConnectString())
			ctx := testenv.Ctx(t, testenv.WaitShort)
			sub := "/" + testenv.Uniq("t")

			p, err := c.Create(ctx, sub+"/a/b", []byte("one"), framework.WithParents())
			if err != nil || p != sub+"/a/b" {
				t.Fatalf("Create = %q, %v", p, err)
			}
			// The server's view.
			if d, _, err := raw.Get(ctx, tc.prefix+sub+"/a/b"); err != nil || string(d) != "one" {
				t.Fatalf("server path %s: %q, %v", tc.prefix+sub+"/a/b", d, err)
			}
			seq, err := c.Create(ctx, sub+"/a/s-", nil, framework.WithMode(framework.ModePersistentSequential))
			if err != nil || !isSeq(seq, sub+"/a/s-") {
				t.Fatalf("sequential Create = %q, %v", seq, err)
			}
			if d, st, err := c.Get(ctx, sub+"/a/b"); err != nil || string(d) != "one" || st == nil {
				t.Fatalf("Get = %q, %v, %v", d, st, err)
			}
			if _, err := c.Set(ctx, sub+"/a/b", []byte("two")); err != nil {
				t.Fatal(err)
			}
			if d, _, err := raw.Get(ctx, tc.prefix+sub+"/a/b"); err != nil || string(d) != "two" {
				t.Fatalf("server sees %q, %v after Set", d, err)
			}
			kids, _, err := c.Children(ctx, sub+"/a")
			slices.Sort(kids)
			if err != nil || len(kids) != 2 || kids[0] != "b" || kids[1] != framework.NodeName(seq) {
				t.Fatalf("Children = %v, %v", kids, err)
			}
			if ok, st, err := c.Exists(ctx, sub+"/a/b"); !ok || st == nil || err != nil {
				t.Fatalf("Exists = %v, %v, %v", ok, st, err)
			}
			if root, _, err := c.Children(ctx, "/"); err != nil || !slices.Contains(root, sub[1:]) {
				t.Fatalf("Children(/) = %v, %v; want %s among them", root, err, sub[1:])
			}
			if err := c.Sync(ctx, sub+"/a"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.GetACL(ctx, sub+"/a/b"); err != nil {
				t.Fatal(err)
			}

			// Watches report the caller's path.
			_, _, w, err := c.GetW(ctx, sub+"/a/b")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Set(ctx, tc.prefix+sub+"/a/b", []byte("three")); err != nil {
				t.Fatal(err)
			}
			if ev := waitEvent(t, w, testenv.WaitShort); ev.Path != sub+"/a/b" || ev.Type != framework.EventNodeDataChanged {
				t.Fatalf("watch event %+v", ev)
			}

			res, err := c.Multi(ctx,
				framework.CreateOp{Path: sub + "/m"},
				framework.CreateOp{Path: sub + "/m/q-", Mode: framework.ModePersistentSequential},
				framework.SetDataOp{Path: sub + "/a/b", Data: []byte("four"), Version: -1},
				framework.CheckOp{Path: sub + "/a", Version: -1},
				framework.DeleteOp{Path: seq, Version: -1})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Path != sub+"/m" || !isSeq(res[1].Path, sub+"/m/q-") || res[2].Stat == nil {
				t.Fatalf("Multi results %+v", res)
			}
			if ok, _, err := raw.Exists(ctx, tc.prefix+res[1].Path); !ok || err != nil {
				t.Fatalf("server has no %s: %v", tc.prefix+res[1].Path, err)
			}

			if err := c.Delete(ctx, sub, framework.WithChildren()); err != nil {
				t.Fatal(err)
			}
			if ok, _, err := raw.Exists(ctx, tc.prefix+sub); ok || err != nil {
				t.Fatalf("server still has %s (%v)", tc.prefix+sub, err)
			}
		})
	}
}

// isSeq reports whether p is prefix followed by a 10-digit sequence number.
func isSeq(p, prefix string) bool {
	if len(p) != len(prefix)+10 || p[:len(prefix)] != prefix {
		return false
	}
	for _, r := range p[len(prefix):] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// The ACL provider decides the ACL of created nodes and of created
// parents, and sees the namespaced path.
func TestACLProvider(t *testing.T) {
	ns := testenv.Uniq("acl")
	restricted := []zk.ACL{{Perms: zk.PermRead | zk.PermWrite | zk.PermCreate | zk.PermDelete, Scheme: "world", ID: "anyone"}}
	var (
		mu   sync.Mutex
		seen []string
	)
	provider := framework.ACLFunc(func(p string) []zk.ACL {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
		if p == "/"+ns {
			return zk.WorldACL(zk.PermAll)
		}
		return restricted
	})
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns), framework.WithACLProvider(provider))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/p1/p2/node", nil, framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/p1", "/p1/p2", "/p1/p2/node"} {
		acl, _, err := c.GetACL(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(acl, restricted) {
			t.Errorf("ACL of %s = %+v, want %+v", p, acl, restricted)
		}
	}
	mu.Lock()
	for _, p := range []string{"/" + ns, "/" + ns + "/p1", "/" + ns + "/p1/p2", "/" + ns + "/p1/p2/node"} {
		if !slices.Contains(seen, p) {
			t.Errorf("provider not asked for %s (asked for %v)", p, seen)
		}
	}
	mu.Unlock()

	// An explicit ACL wins over the provider, for the node only.
	open := zk.WorldACL(zk.PermAll)
	if _, err := c.Create(ctx, "/q1/node", nil, framework.WithParents(), framework.WithACL(open...)); err != nil {
		t.Fatal(err)
	}
	if acl, _, _ := c.GetACL(ctx, "/q1/node"); !slices.Equal(acl, open) {
		t.Errorf("ACL of /q1/node = %+v, want %+v", acl, open)
	}
	if acl, _, _ := c.GetACL(ctx, "/q1"); !slices.Equal(acl, restricted) {
		t.Errorf("ACL of parent /q1 = %+v, want %+v", acl, restricted)
	}
	// With ADMIN it can, if the ACL version matches.
	if _, err := c.SetACL(ctx, "/q1/node", restricted, framework.WithVersion(5)); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("SetACL with a wrong version: %v, want ErrBadVersion", err)
	}
	if st, err := c.SetACL(ctx, "/q1/node", restricted, framework.WithVersion(0)); err != nil || st.Aversion != 1 {
		t.Errorf("SetACL = %+v, %v", st, err)
	}
	if acl, _, _ := c.GetACL(ctx, "/q1/node"); !slices.Equal(acl, restricted) {
		t.Errorf("ACL of /q1/node after SetACL = %+v, want %+v", acl, restricted)
	}
	// Without ADMIN, the ACL cannot be changed.
	if _, err := c.SetACL(ctx, "/q1", open); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("SetACL without ADMIN: %v, want ErrNoAuth", err)
	}
	// Multi's creates use the provider too.
	if _, err := c.Multi(ctx, framework.CreateOp{Path: "/m"}); err != nil {
		t.Fatal(err)
	}
	if acl, _, _ := c.GetACL(ctx, "/m"); !slices.Equal(acl, restricted) {
		t.Errorf("ACL of /m = %+v, want %+v", acl, restricted)
	}
}

// Digest authentication: a node with a digest ACL is refused to clients
// without the credentials (zk.ErrNoAuth) and open to the one with them.
func TestDigestAuth(t *testing.T) {
	ns := testenv.Uniq("auth")
	owner := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns),
		framework.WithAuth("digest", []byte("alice:secret")))
	anonymous := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	intruder := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns),
		framework.WithAuth("digest", []byte("alice:guess")))
	ctx := testenv.Ctx(t, testenv.WaitShort)

	acl := zk.DigestACL(zk.PermAll, "alice", "secret")
	if _, err := owner.Create(ctx, "/private", []byte("s3cret"), framework.WithACL(acl...)); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*framework.Client{"anonymous": anonymous, "wrong password": intruder} {
		if _, _, err := c.Get(ctx, "/private"); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s Get: %v, want ErrNoAuth", name, err)
		}
		if _, err := c.Set(ctx, "/private", nil); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s Set: %v, want ErrNoAuth", name, err)
		}
		if _, err := c.Create(ctx, "/private/kid", nil); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s Create below: %v, want ErrNoAuth", name, err)
		}
	}
	if d, _, err := owner.Get(ctx, "/private"); err != nil || string(d) != "s3cret" {
		t.Fatalf("owner Get = %q, %v", d, err)
	}
	if _, err := owner.Create(ctx, "/private/kid", nil); err != nil {
		t.Fatalf("owner Create below: %v", err)
	}

	// The credentials survive a reconnection (same session) and an expiry
	// (new session).
	p := zktest.StartProxy(t, testenv.Shared().Addr())
	c, log := newRecordedClient(t, p.Addr(), framework.WithNamespace(ns), framework.WithAuth("digest", []byte("alice:secret")))
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	if d, _, err := c.Get(ctx, "/private"); err != nil || string(d) != "s3cret" {
		t.Fatalf("Get through the proxy = %q, %v", d, err)
	}
	sess := c.Session()
	p.Drop()
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateReconnected)
	if c.Session() != sess {
		t.Fatal("the session changed on a mere reconnection")
	}
	if d, _, err := c.Get(ctx, "/private"); err != nil || string(d) != "s3cret" {
		t.Fatalf("Get after reconnection = %q, %v", d, err)
	}
	lctx := testenv.Ctx(t, testenv.WaitLong)
	if err := zktest.ExpireSession(lctx, p, testenv.Shared(), sess.ID()); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitLong, framework.StateConnected, framework.StateSuspended, framework.StateReconnected,
		framework.StateSuspended, framework.StateLost, framework.StateReconnected)
	if d, _, err := c.Get(lctx, "/private"); err != nil || string(d) != "s3cret" {
		t.Fatalf("Get in a new session = %q, %v", d, err)
	}
}

// The chroot and namespace nodes are persistent, also when a create with
// container parents makes them again after someone deleted them: a
// container namespace would be reaped under its clients once empty. The
// parents below the namespace are containers still. A client cannot tell a
// container by its stat (the server shows it ephemeral owner 0), so the
// proof is the reaper's: the namespace, emptied, outlives a whole reaping.
func TestNamespaceMadeAgainStaysPersistent(t *testing.T) {
	top := testenv.Uniq("nsagain")
	for _, tc := range []struct {
		name, connect, prefix string
	}{
		{"namespace", testenv.Shared().ConnectString(), "/" + top},
		{"chroot+namespace", testenv.Shared().ConnectString() + "/" + top + "-chroot", "/" + top + "-chroot/" + top},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.connect, framework.WithNamespace(top))
			admin := newClient(t, testenv.Shared().ConnectString())
			ctx := testenv.Ctx(t, testenv.WaitLong)
			if _, err := c.Create(ctx, "/a/leaf", nil, framework.WithParentContainers()); err != nil {
				t.Fatal(err)
			}
			first := "/" + strings.Split(tc.prefix, "/")[1]
			if err := admin.Delete(ctx, first, framework.WithChildren()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(ctx, "/b/leaf", nil, framework.WithParentContainers()); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, "/b/leaf"); err != nil {
				t.Fatal(err)
			}
			waitGone(t, ctx, admin, tc.prefix+"/b") // a container, emptied
			// The namespace, emptied when /b went, would be reaped by the
			// next reaping at the latest; two reapings more, the second
			// begun after the first ended, and it must still be there.
			for range 2 {
				canary := "/" + testenv.Uniq("canary")
				if _, err := admin.Create(ctx, canary+"/x", nil, framework.WithParentContainers()); err != nil {
					t.Fatal(err)
				}
				if err := admin.Delete(ctx, canary+"/x"); err != nil {
					t.Fatal(err)
				}
				waitGone(t, ctx, admin, canary)
			}
			for p := tc.prefix; p != "/"; p = framework.ParentPath(p) {
				if ok, _, err := admin.Exists(ctx, p); err != nil || !ok {
					t.Fatalf("%s after a reaping: exists %v, %v; want it kept (persistent)", p, ok, err)
				}
			}
		})
	}
}

// waitGone waits until the server's container reaper has deleted path.
func waitGone(t *testing.T, ctx context.Context, c *framework.Client, path string) {
	t.Helper()
	testenv.Eventually(t, testenv.WaitLong, "the server reaps "+path, func() error {
		ok, _, err := c.Exists(ctx, path)
		if err == nil && ok {
			err = errors.New("still there")
		}
		return err
	})
}
