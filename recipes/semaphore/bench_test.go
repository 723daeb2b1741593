package semaphore_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/internal/testenv"
)

func BenchmarkSemaphoreAcquireRelease(b *testing.B) {
	s := newSem(b, testenv.Client(b, testenv.Shared().ConnectString()), semPath(b), 3)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := s.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acq/s")
}
