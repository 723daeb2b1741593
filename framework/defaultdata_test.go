package framework_test

import (
	"net"
	"os"
	"slices"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// A client's default node data is what Curator writes
// (CuratorFrameworkFactory.getLocalAddress, i.e.
// InetAddress.getLocalHost().getHostAddress()): an address the host NAME
// resolves to, not some interface address; WithDefaultData overrides it.
// interop's node-data case checks it byte for byte against Curator.
func TestDefaultDataIsHostNameAddress(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := net.LookupHost(host)
	if err != nil {
		t.Fatalf("this test needs the host name %q to resolve: %v", host, err)
	}
	c := newClient(t, testenv.Shared().ConnectString())
	if got := string(c.DefaultData()); !slices.Contains(addrs, got) {
		t.Fatalf("default data %q; host name %q resolves to %v", got, host, addrs)
	}
	c2 := newClient(t, testenv.Shared().ConnectString(), framework.WithDefaultData([]byte("mine")))
	if got := string(c2.DefaultData()); got != "mine" {
		t.Fatalf("WithDefaultData: %q", got)
	}
}
