package main

import (
	"testing"

	"github.com/gocurator/curator/examples/internal/zkenv"
)

// The example runs to its end without an error.
func TestExample(t *testing.T) { zkenv.Test(t, run) }
