package locks

import "github.com/gocurator/curator/internal/telemetry"

// A MultiLock of these locks records with their client's providers.
func init() {
	telemetry.RegisterSource(func(v any) *telemetry.Provider {
		if l, ok := v.(interface{ telemetryProvider() *telemetry.Provider }); ok {
			return l.telemetryProvider()
		}
		return nil
	})
}

func (l *lock) telemetryProvider() *telemetry.Provider { return telemetry.ForClient(l.d.Client()) }
