package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/testenv"
)

// The cost of telemetry, as benchmarks (never timed tests):
//
//	go test -run '^$' -bench . -benchmem -count 6 ./internal/telemetry
//
// BenchmarkHooks: the hook functions alone, per call, with OpenTelemetry's
// global providers as nobody set them (the library's default) and with the
// no-op providers: a few ns, no allocation. With an SDK they cost what the
// SDK costs. BenchmarkLockUnlock: a Lock and Unlock of a mutex against a
// real server (a protected create, a getChildren and a delete) with no
// provider, with an SDK meter provider and a manual reader, and with both
// an SDK meter and tracer provider recording every span. Its wall time is
// mostly the server's; cpu-ns/op is the client process's CPU time per pair,
// which shows the client's own overhead.

type fakeConn struct{}

func (fakeConn) Server() string   { return "127.0.0.1:2181" }
func (fakeConn) SessionID() int64 { return 0x1234 }

func BenchmarkHooks(b *testing.B) {
	providers := []struct {
		name string
		cfg  func(b *testing.B) telemetry.Config
	}{
		{"global-unset", func(*testing.B) telemetry.Config { return telemetry.Config{} }},
		{"noop", func(*testing.B) telemetry.Config {
			return telemetry.Config{MeterProvider: noop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider()}
		}},
		{"sdk-metrics", func(b *testing.B) telemetry.Config {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			return telemetry.Config{MeterProvider: mp, TracerProvider: tracenoop.NewTracerProvider()}
		}},
		{"sdk-metrics-traces", func(b *testing.B) telemetry.Config {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(&discard{}))
			b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
			return telemetry.Config{MeterProvider: mp, TracerProvider: tp}
		}},
	}
	for _, pr := range providers {
		b.Run(pr.name, func(b *testing.B) {
			p := telemetry.New(pr.cfg(b))
			ctx := context.Background()
			conn := fakeConn{}
			rec := p.Recipe(telemetry.KindMutex, "/lock")
			b.Run("attempt", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p.StartOp(ctx, "get", conn, "/lock/node").End(nil)
				}
			})
			b.Run("acquire", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					actx, a := rec.StartAcquire(ctx)
					a.End(nil)
					h := rec.Holding()
					_, rel := rec.StartRelease(telemetry.Outer(actx))
					rel.End(nil)
					h.Released(telemetry.ReleaseReleased)
				}
			})
			b.Run("state", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p.StateChanged("connected")
				}
			})
		})
	}
}

// discard is a span exporter that keeps nothing.
type discard struct{ tracetest.NoopExporter }

func BenchmarkLockUnlock(b *testing.B) {
	cases := []struct {
		name string
		opts func(b *testing.B) []framework.Option
	}{
		{"none", func(*testing.B) []framework.Option { return nil }},
		{"sdk-metrics", func(b *testing.B) []framework.Option {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			return []framework.Option{framework.WithMeterProvider(mp)}
		}},
		{"sdk-metrics-traces", func(b *testing.B) []framework.Option {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(&discard{}))
			b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
			return []framework.Option{framework.WithMeterProvider(mp), framework.WithTracerProvider(tp)}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := testenv.Client(b, testenv.Shared().ConnectString(), tc.opts(b)...)
			m := mutex(b, c, path(b))
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := m.Lock(ctx); err != nil {
					b.Fatal(err)
				}
				if err := m.Unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
			// The wall time is mostly the server's (its disk, the loopback):
			// the client's own CPU time per pair tells its overhead apart.
			if d := cpuTime() - cpu; d > 0 {
				b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
