package main

import (
	"testing"

	"github.com/gocurator/curator/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The example runs to its end against a real ZooKeeper: its watcher sees
// the operator's last change (run fails otherwise, or times out), and
// leaves nothing running (testenv.Main's goleak).
func TestRun(t *testing.T) {
	if err := run(testenv.Ctx(t, testenv.WaitLong), testenv.Shared()); err != nil {
		t.Fatal(err)
	}
}
