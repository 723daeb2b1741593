package zktest_test

import (
	"testing"

	"github.com/gocurator/curator/testing/zktest"
)

// BenchmarkNewServer measures starting a standalone server until it serves
// and closing it.
func BenchmarkNewServer(b *testing.B) {
	for b.Loop() {
		s, err := zktest.NewServer()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.StartupTime().Milliseconds()), "startup-ms")
		s.Close()
	}
}

// BenchmarkNewCluster3 measures starting a 3-member ensemble until it has
// a quorum and closing it.
func BenchmarkNewCluster3(b *testing.B) {
	for b.Loop() {
		c, err := zktest.NewCluster(3)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
