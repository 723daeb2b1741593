package semaphore

import (
	"context"

	"github.com/gocurator/curator/internal/telemetry"
)

// recipe is the semaphore's telemetry as the given kind.
func (s *Semaphore) recipe(kind telemetry.Kind) telemetry.Recipe {
	return telemetry.ForClient(s.client).Recipe(kind, s.path)
}

// observed is acquire as the telemetry records it: one acquisition (timed,
// traced), and each lease granted a holding.
func (s *Semaphore) observed(ctx context.Context, n int, try bool) ([]*Lease, error) {
	rec := s.recipe(telemetry.KindSemaphore)
	ctx, acq := rec.StartAcquire(ctx)
	leases, err := s.acquire(ctx, n, try)
	acq.End(err)
	holdings(leases, rec)
	return leases, err
}

// holdings starts recording each lease as a holding of rec.
func holdings(leases []*Lease, rec telemetry.Recipe) {
	for _, l := range leases {
		l.rec = rec
		l.tel = l.h.RecordHolding(rec)
	}
}

// A MultiLock of semaphore mutexes records with their client's providers.
func init() {
	telemetry.RegisterSource(func(v any) *telemetry.Provider {
		if m, ok := v.(*Mutex); ok && m != nil {
			return telemetry.ForClient(m.s.client)
		}
		return nil
	})
}
