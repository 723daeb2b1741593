package zktest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

func TestClusterLeaderFailover(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := zktest.StartCluster(t, 3)
	t.Logf("3-member ensemble in quorum after %v", time.Since(start))
	members := c.Members()
	if len(members) != 3 {
		t.Fatalf("%d members", len(members))
	}
	want := fmt.Sprintf("%s,%s,%s", members[0].Addr(), members[1].Addr(), members[2].Addr())
	if c.ConnectString() != want {
		t.Fatalf("ConnectString %q, want %q", c.ConnectString(), want)
	}
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range members {
		mode, err := m.Mode()
		if err != nil || (i == leader) != (mode == "leader") || (i != leader && mode != "follower") {
			t.Fatalf("member %d: mode %q, %v (leader is %d)", i, mode, err, leader)
		}
	}

	cl := connect(t, c.ConnectString(), 2*time.Second)
	if _, err := cl.Create("/before", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	if err := members[leader].Stop(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("new quorum %v after killing the leader", time.Since(killed))
	newLeader, err := c.Leader()
	if err != nil || newLeader == leader {
		t.Fatalf("Leader after failover = %d, %v (old %d)", newLeader, err, leader)
	}
	// The ensemble still serves, with the data.
	testenv.Eventually(t, testenv.WaitShort, "condition", func() error {
		_, err := cl.Create("/after", nil, 0, zk.WorldACL(zk.PermAll))
		if err == zk.ErrNodeExists {
			return nil
		}
		return err
	})
	if got, _, err := cl.Get("/before"); err != nil || string(got) != "1" {
		t.Fatalf("Get(/before) = %q, %v", got, err)
	}

	// The old leader comes back as a follower.
	if err := members[leader].Start(); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel2()
	if err := c.WaitQuorum(ctx2); err != nil {
		t.Fatal(err)
	}
	if mode, err := members[leader].Mode(); err != nil || mode != "follower" {
		t.Fatalf("restarted old leader: mode %q, %v", mode, err)
	}
	ids, err := c.Sessions()
	if err != nil || !containsID(ids, cl.SessionID()) {
		t.Fatalf("Cluster.Sessions = %x, %v; want %x among them", ids, err, cl.SessionID())
	}

	// Resync: the old leader's data is wiped and taken whole from the new
	// leader; it serves all of it, /during made while it was down included.
	if _, err := cl.Create("/during", []byte("2"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := members[leader].Resync(); err != nil {
		t.Fatal(err)
	}
	alone := connect(t, members[leader].Addr(), 2*time.Second)
	for p, want := range map[string]string{"/before": "1", "/during": "2"} {
		if got, _, err := alone.Get(p); err != nil || string(got) != want {
			t.Errorf("the resynced member serves %s = %q, %v; want %q", p, got, err, want)
		}
	}
}

func TestClusterOfOne(t *testing.T) {
	t.Parallel()
	c := zktest.StartCluster(t, 1)
	if i, err := c.Leader(); err != nil || i != 0 {
		t.Fatalf("Leader = %d, %v", i, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if c.Members()[0].Running() {
		t.Fatal("member running after Close")
	}
}
