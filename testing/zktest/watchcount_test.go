package zktest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// TestWatchCountSeesEveryWatch checks what each watch helper counts on
// ZooKeeper 3.8: WatchCount every watch (data, exists and child),
// DataWatchCount, WatchesByPath and WatchesBySession only data and exists
// watches (wchs/wchp/wchc do not list child watches).
func TestWatchCountSeesEveryWatch(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	c := connect(t, s.ConnectString(), 2*time.Second)
	sid := c.SessionID()
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/c", "/d"} {
		if _, err := c.Create(p, nil, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	want := func(all, data int) {
		t.Helper()
		testenv.Eventually(t, testenv.WaitShort, "condition", func() error {
			n, err := s.WatchCount()
			if err != nil {
				return err
			}
			d, err := s.DataWatchCount()
			if err != nil {
				return err
			}
			if n != all || d != data {
				return fmt.Errorf("WatchCount %d, DataWatchCount %d; want %d, %d", n, d, all, data)
			}
			return nil
		})
	}
	want(0, 0)

	// A child watch alone: only WatchCount sees it.
	_, _, childEv, err := c.ChildrenW("/c")
	if err != nil {
		t.Fatal(err)
	}
	want(1, 0)
	if byPath, err := s.WatchesByPath(); err != nil || len(byPath) != 0 {
		t.Errorf("WatchesByPath with only a child watch = %v, %v; want empty", byPath, err)
	}

	// A data watch, an exists watch on a missing node, and a child watch on
	// a node that also has a data watch: each is one more watch.
	if _, _, _, err := c.GetW("/d"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.ExistsW("/missing"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.ChildrenW("/d"); err != nil {
		t.Fatal(err)
	}
	want(4, 2)
	bySession, err := s.WatchesBySession()
	if err != nil || len(bySession[sid]) != 2 {
		t.Errorf("WatchesBySession = %v, %v; want /d and /missing for 0x%x", bySession, err, sid)
	}

	// Firing the child watch on /c removes it.
	if _, err := c.Create("/c/x", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-childEv:
		if ev.Type != zk.EventNodeChildrenChanged {
			t.Fatalf("child watch fired %v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("child watch did not fire")
	}
	want(3, 2)
}
