package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/testing/zktest"
)

func TestSplitChroot(t *testing.T) {
	for _, tc := range []struct{ in, hosts, chroot string }{
		{"127.0.0.1:2181", "127.0.0.1:2181", ""},
		{"a:1,b:2/x", "a:1,b:2", "/x"},
		{"a:1,b:2/x/y/", "a:1,b:2", "/x/y"},
		{"a:1/", "a:1", ""},
	} {
		if h, c := splitChroot(tc.in); h != tc.hosts || c != tc.chroot {
			t.Errorf("splitChroot(%q) = %q, %q; want %q, %q", tc.in, h, c, tc.hosts, tc.chroot)
		}
	}
}

// TestHarnessChroot: a chroot in --connect holds for every peer (gozk's
// zk.Connect takes none: it once dialled "host:port/chroot" and never got a
// session), nothing is written outside it, and the run's tree inside it is
// removed at the end.
func TestHarnessChroot(t *testing.T) {
	srv := zktest.StartServer(t) // closed at cleanup; a server that cannot start fails the test
	peers := "gocurator,gozk"
	if p, err := buildCurator(context.Background()); err == nil {
		p.remove()
		peers += ",curator"
	}
	conn, _, err := zk.Connect([]string{srv.ConnectString()}, 5*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, err := parseFlags([]string{"--mode", "tiny", "--connect", srv.ConnectString() + "/bench/chroot"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := harness(context.Background(), c, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a chroot that does not exist: %v, want an error saying so", err)
	}
	for _, p := range []string{"/bench", "/bench/chroot"} { // a chroot is a node that exists
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	c, rep, _ := runHarness(t, "--mode", "tiny", "--connect", srv.ConnectString()+"/bench/chroot",
		"--peers", peers, "--workloads", "contended,waiters", "--k", "2")
	for _, r := range rep.Results {
		checkRun(t, c, r)
	}
	kids, _, err := conn.Children("/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if k != "zookeeper" && k != "bench" {
			t.Errorf("/%s written outside the chroot", k)
		}
	}
	if kids, _, err := conn.Children("/bench"); err != nil || len(kids) != 1 {
		t.Errorf("/bench holds %q (%v), want the chroot alone", kids, err)
	}
	if kids, _, err := conn.Children("/bench/chroot"); err != nil || len(kids) != 0 {
		t.Errorf("the chroot still holds %q (%v) after the run", kids, err)
	}
}
