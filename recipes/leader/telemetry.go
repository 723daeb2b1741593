package leader

import (
	"context"

	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/telemetry"
)

// endAttempt records the end of an attempt to lead: won (acquired),
// failed (its error), or won too late, after Resign or Close (canceled).
func endAttempt(acq *telemetry.Acquisition, ev event, stale bool) {
	switch {
	case ev.kind == evFailed:
		acq.End(ev.err)
	case stale:
		acq.End(context.Canceled)
	default:
		acq.End(nil)
	}
}

// holding starts recording a term of leadership; its loss is recorded by
// the hold.
func holding(rec telemetry.Recipe, h *driver.Hold) *telemetry.Holding {
	return h.RecordHolding(rec)
}
