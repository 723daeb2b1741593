package recipe_test

import (
	"errors"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Issue 38 item 5: no recipe makes its nodes in ZooKeeper's own subtree:
// CheckArgs, which every recipe's constructor calls, refuses a path the
// server would see as /zookeeper or under it (after the client's chroot
// and namespace), with ErrInvalidArgument; a namespace's /zookeeper is an
// ordinary path.
func TestCheckArgsRefusesZooKeeperSubtree(t *testing.T) {
	connect := testenv.Shared().ConnectString()
	plain := testenv.Client(t, connect)
	inZK := testenv.Client(t, connect, framework.WithNamespace("zookeeper"))
	ns := testenv.Client(t, connect, framework.WithNamespace(testenv.Uniq("recipe")))
	for _, tc := range []struct {
		name string
		c    *framework.Client
		path string
		ok   bool
	}{
		{"/zookeeper", plain, "/zookeeper", false},
		{"/zookeeper/lock", plain, "/zookeeper/lock", false},
		{"/zookeeper/quota/lock", plain, "/zookeeper/quota/lock", false},
		{"namespace zookeeper", inZK, "/lock", false},
		{"/zookeeperx", plain, "/zookeeperx/lock", true},
		{"a namespace's /zookeeper", ns, "/zookeeper", true},
		{"a namespace's /zookeeper/lock", ns, "/zookeeper/lock", true},
	} {
		err := recipe.CheckArgs(tc.c, "lock", tc.path)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, curator.ErrInvalidArgument)) {
			t.Errorf("%s: CheckArgs(%q): %v, want ok=%v or ErrInvalidArgument", tc.name, tc.path, err, tc.ok)
		}
	}
	// What CheckArgs refused before stays refused, as before.
	for _, tc := range []struct {
		c    *framework.Client
		path string
		want error
	}{
		{nil, "/lock", curator.ErrInvalidArgument},
		{plain, "lock", curator.ErrInvalidPath},
		{plain, "/", curator.ErrInvalidPath},
		{inZK, "/", curator.ErrInvalidPath},
	} {
		if err := recipe.CheckArgs(tc.c, "lock", tc.path); !errors.Is(err, tc.want) {
			t.Errorf("CheckArgs(%v, %q): %v, want %v", tc.c != nil, tc.path, err, tc.want)
		}
	}
}
