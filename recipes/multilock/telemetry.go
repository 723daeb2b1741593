package multilock

import (
	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/telemetry"
)

// recipeTelemetry is a MultiLock's telemetry: with the providers of the
// client of its first member made by this module (the global providers if
// none is), and with path attributes, its members' paths joined.
func recipeTelemetry(members []curator.Locker) telemetry.Recipe {
	vs := make([]any, len(members))
	paths := make([]string, 0, len(members))
	for i, m := range members {
		vs[i] = m
		if p, ok := m.(interface{ Path() string }); ok {
			paths = append(paths, p.Path())
		}
	}
	p := telemetry.SourceOf(vs...)
	return p.Recipe(telemetry.KindMultiLock, p.JoinPaths(paths))
}

// releaseReason is how a holding of the multi-lock ends at its last
// Unlock: lost if a member was lost meanwhile (that member's loss is
// counted as its own recipe's), else released.
func releaseReason(h *holding) telemetry.ReleaseReason {
	for _, ch := range h.members {
		select {
		case <-ch:
			return telemetry.ReleaseLost
		default:
		}
	}
	return telemetry.ReleaseReleased
}

// A MultiLock of MultiLocks records with the inner one's providers.
func init() {
	telemetry.RegisterSource(func(v any) *telemetry.Provider {
		if ml, ok := v.(*MultiLock); ok && ml != nil {
			return ml.tel.Provider()
		}
		return nil
	})
}
