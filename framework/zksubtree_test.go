package framework_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// Issue 38 item 5: no create lands in ZooKeeper's own subtree (/zookeeper:
// quotas, the dynamic configuration), which ZooKeeper 3.8 lets any client
// write to: Create, CreateNode and a Multi's CreateOp refuse, before any
// I/O, a path the server would see as /zookeeper or under it, after the
// client's chroot and namespace; CheckCreatePath (every recipe's check)
// says so. A chroot's or namespace's own /zookeeper is an ordinary node.
// Reads of the subtree stay allowed.
func TestZooKeeperSubtreeRefused(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitShort)
	connect := testenv.Shared().ConnectString()
	raw := newClient(t, connect)
	before := children(t, raw, "/zookeeper")
	modes := []framework.CreateMode{framework.ModePersistent, framework.ModeEphemeral,
		framework.ModePersistentSequential, framework.ModeEphemeralSequential, framework.ModeContainer}
	creates := func(c *framework.Client, p string) map[string]error {
		errs := map[string]error{}
		for _, m := range modes {
			for _, prot := range []bool{false, true} {
				opts := []framework.OpOption{framework.WithMode(m), framework.WithParentContainers()}
				if prot {
					opts = append(opts, framework.WithProtection())
				}
				_, err := c.CreateNode(ctx, p, nil, opts...)
				errs[fmt.Sprintf("CreateNode(%q, mode %d, protected %v)", p, m, prot)] = err
			}
		}
		_, err := c.Create(ctx, p, nil)
		errs[fmt.Sprintf("Create(%q)", p)] = err
		_, err = c.Multi(ctx, framework.CreateOp{Path: p})
		errs[fmt.Sprintf("Multi CreateOp(%q)", p)] = err
		errs[fmt.Sprintf("CheckCreatePath(%q)", p)] = c.CheckCreatePath(p)
		return errs
	}
	refused := func(name string, c *framework.Client, paths ...string) {
		t.Helper()
		for _, p := range paths {
			for op, err := range creates(c, p) {
				if !errors.Is(err, curator.ErrInvalidArgument) {
					t.Errorf("%s: %s: %v, want ErrInvalidArgument", name, op, err)
				}
			}
		}
	}
	plain := newClient(t, connect)
	refused("no namespace", plain, "/zookeeper", "/zookeeper/x", "/zookeeper/quota/x", "/zookeeper/")
	refused("namespace zookeeper", newClient(t, connect, framework.WithNamespace("zookeeper")), "/x", "/")
	refused("chroot /zookeeper/quota", newClient(t, connect+"/zookeeper/quota"), "/x")
	if got := children(t, raw, "/zookeeper"); !slices.Equal(got, before) {
		t.Fatalf("children of /zookeeper %v after refused creates, want %v", got, before)
	}
	if _, _, err := plain.Get(ctx, "/zookeeper/config"); err != nil {
		t.Fatalf("Get of /zookeeper/config: %v", err)
	}

	// Not ZooKeeper's subtree: a name that merely starts the same, and a
	// chroot's or a namespace's /zookeeper.
	ns := testenv.Uniq("zksub")
	for name, tc := range map[string]struct {
		c    *framework.Client
		path string
	}{
		"/zookeeperx":              {plain, "/" + testenv.Uniq("zookeeperx")},
		"a namespace's /zookeeper": {newClient(t, connect, framework.WithNamespace(ns)), "/zookeeper"},
		"a chroot's /zookeeper":    {newClient(t, connect+"/"+ns+"-chroot"), "/zookeeper"},
	} {
		if err := tc.c.CheckCreatePath(tc.path); err != nil {
			t.Errorf("%s: CheckCreatePath(%q): %v", name, tc.path, err)
		}
		p, err := tc.c.Create(ctx, tc.path, nil, framework.WithParents())
		if err != nil {
			t.Errorf("%s: Create(%q): %v", name, tc.path, err)
			continue
		}
		if err := tc.c.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/" + ns, "/" + ns + "-chroot"} {
		if err := raw.Delete(ctx, p, framework.WithChildren(), framework.WithIgnoreMissing()); err != nil {
			t.Fatal(err)
		}
	}
}
