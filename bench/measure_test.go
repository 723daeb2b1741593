package main

import (
	"os"
	"strings"
	"testing"
)

// TestStallDump: a stalled Go peer leaves its goroutines in a file its
// STALL line names (the harness keeps that line in the run's error).
func TestStallDump(t *testing.T) {
	said := dumpGoroutines()
	name, ok := strings.CutPrefix(said, "; goroutines in ")
	if !ok {
		t.Fatalf("dumpGoroutines said %q", said)
	}
	t.Cleanup(func() { os.Remove(name) })
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "TestStallDump") {
		t.Errorf("the dump lacks this test's goroutine:\n%.2000s", b)
	}
}
