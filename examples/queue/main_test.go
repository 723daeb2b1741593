package main

import (
	"testing"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The example runs to its end without an error, and leaves nothing running.
func TestExample(t *testing.T) { zkenv.Test(t, run) }
