// Package globaltest checks the defaults: a client given no provider uses
// OpenTelemetry's global ones, records nothing and starts no span while
// nobody installed an SDK there, and records once the application does,
// client made before or after. A package of its own: setting the globals
// cannot be undone, and no other test binary may see them set.
package globaltest

import (
	"errors"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/telemetry/telemetrytest"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// rig is installed as the global providers by the first run of the test,
// for the life of the test binary (go test -count runs it again).
var (
	rig     *telemetrytest.Rig
	install sync.Once
)

func TestGlobalProviders(t *testing.T) {
	connect := testenv.Shared().ConnectString()
	before := testenv.Client(t, connect, framework.WithNamespace(testenv.Uniq("global")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	install.Do(func() {
		p := telemetry.ForClient(before)
		if op := p.StartOp(ctx, "get", nil, "/x"); op != nil {
			t.Error("an attempt is recorded with the globals unset")
		}
		if _, a := p.Recipe(telemetry.KindMutex, "/l").StartAcquire(ctx); a != nil {
			t.Error("an acquisition is recorded with the globals unset")
		}
		rig = telemetrytest.NewUnmanaged()
		otel.SetMeterProvider(rig.Meters)
		otel.SetTracerProvider(rig.Tracers)
	})
	rig.Spans.Reset()
	nonode0 := rig.Count(t, telemetry.MetricOpDuration, telemetry.KeyErrorType.String("NONODE"))
	acq0 := rig.Count(t, telemetry.MetricAcquireDuration)
	after := testenv.Client(t, connect, framework.WithNamespace(testenv.Uniq("global")))
	for _, c := range []*framework.Client{before, after} {
		if _, _, err := c.Get(ctx, "/missing"); !errors.Is(err, zk.ErrNoNode) {
			t.Fatal(err)
		}
		m, err := locks.NewMutex(c, "/lock")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := rig.Count(t, telemetry.MetricOpDuration, telemetry.KeyErrorType.String("NONODE")) - nonode0; n != 2 {
		t.Fatalf("NONODE samples through the global provider: %d, want 2: %v", n, rig.Points(t, telemetry.MetricOpDuration))
	}
	if n := rig.Count(t, telemetry.MetricAcquireDuration) - acq0; n != 2 {
		t.Fatalf("acquisitions through the global provider: %d, want 2", n)
	}
	if n := len(rig.Ended(telemetry.SpanLockAcquire)); n != 2 {
		t.Fatalf("acquire spans through the global provider: %d, want 2", n)
	}
	if n := len(rig.Ended("getData")); n < 2 {
		t.Fatalf("getData spans through the global provider: %d", n)
	}
}
