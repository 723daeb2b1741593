package main

import (
	"testing"

	"github.com/gocurator/curator/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The program runs to its end against a real ZooKeeper: it checks the
// member list at each step itself, and fails otherwise.
func TestRun(t *testing.T) {
	if err := run(testenv.Ctx(t, testenv.WaitLong), testenv.Shared()); err != nil {
		t.Fatal(err)
	}
}
