package main

import (
	"testing"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The example runs to its end against a real ZooKeeper, in a fresh chroot
// of the shared server as a ZK_CONNECT run is: its watcher sees the
// operator's last change (run fails otherwise, or times out), and leaves
// nothing running (testenv.Main's goleak).
func TestRun(t *testing.T) {
	srv, err := zktest.NewExternal(testenv.Shared().ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := run(testenv.Ctx(t, testenv.WaitLong), srv); err != nil {
		t.Fatal(err)
	}
}
