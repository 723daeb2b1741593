package main

import (
	"testing"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The program runs to its end against a real ZooKeeper (it checks the
// member list at each step itself, and fails otherwise), and leaves
// nothing running.
func TestExample(t *testing.T) { zkenv.Test(t, run) }
