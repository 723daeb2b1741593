package framework_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/retry"
)

// badPaths are rejected by every entry point that takes a path.
var badPaths = []string{
	"",
	"a",
	"a/b",
	"/a/",
	"/a//b",
	"//a",
	"/a/./b",
	"/a/../b",
	"/.",
	"/..",
	"/a\x00b",
	"/a\x01b",
	"/a\x7fb",
	"/a\u0085b",
	"/a\ud7ffb\uf8ffc",
	"/a\ufff0",
	"/a\xffb", // not UTF-8
}

// pathOps calls every entry point that takes a path, with ctx and path.
func pathOps(c *framework.Client) map[string]func(ctx context.Context, p string) error {
	acl := zk.WorldACL(zk.PermAll)
	return map[string]func(context.Context, string) error{
		"Create": func(ctx context.Context, p string) error { _, err := c.Create(ctx, p, nil); return err },
		"CreateProtected": func(ctx context.Context, p string) error {
			_, err := c.Create(ctx, p, nil, framework.WithProtection(), framework.WithParentContainers())
			return err
		},
		"CreateNode": func(ctx context.Context, p string) error { _, err := c.CreateNode(ctx, p, nil); return err },
		"Delete":     func(ctx context.Context, p string) error { return c.Delete(ctx, p) },
		"DeleteGuaranteed": func(ctx context.Context, p string) error {
			return c.Delete(ctx, p, framework.WithGuarantee(), framework.WithChildren())
		},
		"Get":       func(ctx context.Context, p string) error { _, _, err := c.Get(ctx, p); return err },
		"GetW":      func(ctx context.Context, p string) error { _, _, _, err := c.GetW(ctx, p); return err },
		"Set":       func(ctx context.Context, p string) error { _, err := c.Set(ctx, p, nil); return err },
		"Children":  func(ctx context.Context, p string) error { _, _, err := c.Children(ctx, p); return err },
		"ChildrenW": func(ctx context.Context, p string) error { _, _, _, err := c.ChildrenW(ctx, p); return err },
		"Exists":    func(ctx context.Context, p string) error { _, _, err := c.Exists(ctx, p); return err },
		"ExistsW":   func(ctx context.Context, p string) error { _, _, _, err := c.ExistsW(ctx, p); return err },
		"Sync":      func(ctx context.Context, p string) error { return c.Sync(ctx, p) },
		"GetACL":    func(ctx context.Context, p string) error { _, _, err := c.GetACL(ctx, p); return err },
		"SetACL":    func(ctx context.Context, p string) error { _, err := c.SetACL(ctx, p, acl); return err },
		"MultiCreate": func(ctx context.Context, p string) error {
			_, err := c.Multi(ctx, framework.CreateOp{Path: p})
			return err
		},
		"MultiDelete": func(ctx context.Context, p string) error {
			_, err := c.Multi(ctx, framework.CheckOp{Path: "/ok", Version: -1}, framework.DeleteOp{Path: p, Version: -1})
			return err
		},
		"MultiSetData": func(ctx context.Context, p string) error {
			_, err := c.Multi(ctx, framework.SetDataOp{Path: p, Version: -1})
			return err
		},
		"MultiCheck": func(ctx context.Context, p string) error {
			_, err := c.Multi(ctx, framework.CheckOp{Path: p, Version: -1})
			return err
		},
	}
}

// Every entry point rejects invalid input with ErrInvalidPath or
// ErrInvalidArgument before any I/O: the client's namespace is never made,
// no watch and no background operation is left.
func TestBadInputTouchesNothing(t *testing.T) {
	ns := testenv.Uniq("bad")
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	raw := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	var nilCtx context.Context

	check := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	for name, op := range pathOps(c) {
		for _, p := range badPaths {
			check(fmt.Sprintf("%s(%q)", name, p), op(ctx, p), curator.ErrInvalidPath)
			check(fmt.Sprintf("%s(nil ctx, %q)", name, p), op(nilCtx, p), curator.ErrInvalidPath)
		}
		check(name+"(nil ctx)", op(nilCtx, "/ok"), curator.ErrInvalidArgument)
	}
	if err := framework.ValidatePath("/ok/fine-name_1"); err != nil {
		t.Errorf("ValidatePath of a good path: %v", err)
	}
	for _, p := range badPaths {
		check(fmt.Sprintf("ValidatePath(%q)", p), framework.ValidatePath(p), curator.ErrInvalidPath)
	}

	// Sequential creates may end with "/": the server appends the number.
	// Everything else about the path is checked as usual.
	for _, p := range []string{"", "a/", "/a/../", "/a\x00/"} {
		_, err := c.Create(ctx, p, nil, framework.WithMode(framework.ModePersistentSequential))
		check(fmt.Sprintf("sequential Create(%q)", p), err, curator.ErrInvalidPath)
	}

	rootOnly := []struct {
		name string
		err  error
		want error
	}{}
	add := func(name string, err, want error) {
		rootOnly = append(rootOnly, struct {
			name string
			err  error
			want error
		}{name, err, want})
	}
	_, err := c.Create(ctx, "/", nil)
	add("Create(/)", err, curator.ErrInvalidPath)
	add("Delete(/)", c.Delete(ctx, "/", framework.WithGuarantee()), curator.ErrInvalidPath)
	_, err = c.Create(ctx, "/ok", nil, framework.WithMode(framework.CreateMode(-1)))
	add("Create mode -1", err, curator.ErrInvalidArgument)
	_, err = c.Create(ctx, "/ok", nil, framework.WithMode(framework.CreateMode(99)))
	add("Create mode 99", err, curator.ErrInvalidArgument)
	_, err = c.Create(ctx, "/ok", nil, framework.WithACL())
	add("Create empty ACL", err, curator.ErrInvalidArgument)
	_, err = c.Create(ctx, "/ok", nil, framework.WithMode(framework.ModePersistentTTL), framework.WithTTL(0))
	add("Create TTL 0", err, curator.ErrInvalidArgument)
	_, err = c.Create(ctx, "/ok", nil, framework.WithMode(framework.ModePersistentSequentialTTL), framework.WithTTL(-time.Second))
	add("Create TTL negative", err, curator.ErrInvalidArgument)
	_, err = c.Create(ctx, "/ok", nil, framework.WithTTL(time.Second))
	add("Create TTL without TTL mode", err, curator.ErrInvalidArgument)
	_, err = c.SetACL(ctx, "/ok", nil)
	add("SetACL nil ACL", err, curator.ErrInvalidArgument)
	_, err = c.SetACL(ctx, "/ok", []zk.ACL{})
	add("SetACL empty ACL", err, curator.ErrInvalidArgument)
	_, err = c.Multi(ctx)
	add("Multi no ops", err, curator.ErrInvalidArgument)
	_, err = c.Multi(ctx, framework.CheckOp{Path: "/ok", Version: -1}, nil)
	add("Multi nil op", err, curator.ErrInvalidArgument)
	_, err = c.Multi(nilCtx, framework.CheckOp{Path: "/ok", Version: -1})
	add("Multi nil ctx", err, curator.ErrInvalidArgument)
	for _, m := range []framework.CreateMode{framework.ModeContainer, framework.ModePersistentTTL, framework.ModePersistentSequentialTTL, 99} {
		_, err = c.Multi(ctx, framework.CreateOp{Path: "/ok", Mode: m})
		add(fmt.Sprintf("Multi CreateOp mode %d", m), err, curator.ErrInvalidArgument)
	}
	_, err = c.Multi(ctx, framework.CreateOp{Path: "/"})
	add("Multi CreateOp /", err, curator.ErrInvalidPath)
	_, err = c.Multi(ctx, framework.DeleteOp{Path: "/", Version: -1})
	add("Multi DeleteOp /", err, curator.ErrInvalidPath)
	add("BlockUntilConnected nil ctx", c.BlockUntilConnected(nilCtx), curator.ErrInvalidArgument)
	for _, r := range rootOnly {
		check(r.name, r.err, r.want)
	}

	// Nothing reached the server; nothing stays in the client.
	if ok, _, err := raw.Exists(ctx, "/"+ns); err != nil || ok {
		t.Fatalf("namespace /%s exists=%v (%v) after invalid calls only", ns, ok, err)
	}
	if a, w := c.WatchStats(); a != 0 || w != 0 {
		t.Fatalf("WatchStats = %d, %d after invalid calls", a, w)
	}
	if n := c.PendingBackground(); n != 0 {
		t.Fatalf("PendingBackground = %d after invalid calls", n)
	}
	// The client still works.
	if _, err := c.Create(ctx, "/ok", nil); err != nil {
		t.Fatal(err)
	}
}

// New rejects invalid options and connect strings, before dialing.
func TestNewBadInput(t *testing.T) {
	good := testenv.Shared().ConnectString()
	for _, tc := range []struct {
		name    string
		connect string
		opts    []framework.Option
		want    error
	}{
		{"empty connect string", "", nil, curator.ErrInvalidArgument},
		{"blank connect string", "  ", nil, curator.ErrInvalidArgument},
		{"empty host", "127.0.0.1:2181,,x:1", nil, curator.ErrInvalidArgument},
		{"port only", ":2181", nil, curator.ErrInvalidArgument},
		{"port 0", "127.0.0.1:0", nil, curator.ErrInvalidArgument},
		{"port too big", "127.0.0.1:65536", nil, curator.ErrInvalidArgument},
		{"port not a number", "127.0.0.1:zk", nil, curator.ErrInvalidArgument},
		{"bad chroot", good + "/a/", nil, curator.ErrInvalidPath},
		{"bad chroot component", good + "/a//b", nil, curator.ErrInvalidPath},
		{"session timeout 0", good, []framework.Option{framework.WithSessionTimeout(0)}, curator.ErrInvalidArgument},
		{"session timeout negative", good, []framework.Option{framework.WithSessionTimeout(-time.Second)}, curator.ErrInvalidArgument},
		{"connection timeout 0", good, []framework.Option{framework.WithConnectionTimeout(0)}, curator.ErrInvalidArgument},
		{"connection timeout negative", good, []framework.Option{framework.WithConnectionTimeout(-1)}, curator.ErrInvalidArgument},
		{"nil retry policy", good, []framework.Option{framework.WithRetryPolicy(nil)}, curator.ErrInvalidArgument},
		{"typed nil retry policy", good, []framework.Option{framework.WithRetryPolicy((*retry.NTimes)(nil))}, curator.ErrInvalidArgument},
		{"namespace with slash", good, []framework.Option{framework.WithNamespace("a/")}, curator.ErrInvalidArgument},
		{"namespace with dot-dot", good, []framework.Option{framework.WithNamespace("..")}, curator.ErrInvalidArgument},
		{"namespace with nul", good, []framework.Option{framework.WithNamespace("a\x00")}, curator.ErrInvalidArgument},
		{"empty auth scheme", good, []framework.Option{framework.WithAuth("", []byte("u:p"))}, curator.ErrInvalidArgument},
		{"nil ACL provider", good, []framework.Option{framework.WithACLProvider(nil)}, curator.ErrInvalidArgument},
		{"nil dialer", good, []framework.Option{framework.WithDialer(nil)}, curator.ErrInvalidArgument},
		{"nil logger", good, []framework.Option{framework.WithLogger(nil)}, curator.ErrInvalidArgument},
		{"expiration percent 0", good, []framework.Option{framework.WithSessionExpirationPercent(0)}, curator.ErrInvalidArgument},
		{"expiration percent -1", good, []framework.Option{framework.WithSessionExpirationPercent(-1)}, curator.ErrInvalidArgument},
		{"expiration percent 101", good, []framework.Option{framework.WithSessionExpirationPercent(101)}, curator.ErrInvalidArgument},
		{"bad option among good ones", good, []framework.Option{framework.WithNamespace("x"), framework.WithSessionTimeout(-1), framework.WithLogger(nil)}, curator.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := framework.New(tc.connect, tc.opts...)
			if err == nil {
				c.Close()
				t.Fatalf("New(%q) succeeded", tc.connect)
			}
			if c != nil {
				t.Fatalf("New returned a client with the error %v", err)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("New(%q): %v, want %v", tc.connect, err, tc.want)
			}
		})
	}
	// Accepted: nil options are skipped, a chroot of "/" is none, a host
	// without a port gets 2181.
	for _, connect := range []string{good, good + "/", " " + good + " ", good + ",localhost"} {
		c, err := framework.New(connect, nil, framework.WithSessionTimeout(2*time.Second))
		if err != nil {
			t.Fatalf("New(%q): %v", connect, err)
		}
		c.Close()
	}
}

// A closed client fails every call with ErrClosed, at once.
func TestClosedClient(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("closed")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/ok", nil); err != nil {
		t.Fatal(err)
	}
	sess := c.Session()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	if !sess.Lost() {
		t.Fatal("the session is not over after Close")
	}
	if c.Connected() {
		t.Fatal("a closed client has a connection")
	}
	if got := c.Session(); got != sess || !errors.Is(got.Err(), curator.ErrClosed) {
		t.Fatalf("Session() after Close = %v (err %v), want the closed session, ending with ErrClosed", got, got.Err())
	}
	start := time.Now()
	for name, op := range pathOps(c) {
		if err := op(ctx, "/ok"); !errors.Is(err, curator.ErrClosed) {
			t.Errorf("%s on a closed client: %v, want ErrClosed", name, err)
		}
	}
	if err := c.BlockUntilConnected(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("BlockUntilConnected on a closed client: %v, want ErrClosed", err)
	}
	if err := c.WaitBackground(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("WaitBackground with nothing pending on a closed client: %v, want ErrClosed", err)
	}
	remove := c.AddListener(func(framework.State) { t.Error("listener called on a closed client") })
	remove()
	// At once: logged, not judged, but for a bound only a hang (or every
	// call waiting out a connection timeout) reaches.
	d := time.Since(start)
	t.Logf("%d calls on a closed client took %v", len(pathOps(c))+3, d)
	if d > testenv.WaitShort {
		t.Fatalf("calls on a closed client took %v", d)
	}
}
