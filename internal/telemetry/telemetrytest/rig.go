// Package telemetrytest is what the module's telemetry tests share: an
// OpenTelemetry SDK with a manual metric reader and an in-memory span
// exporter, options that give them to a client, and readers of what was
// recorded. Only tests import it: it keeps the SDK out of the library.
package telemetrytest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gocurator/curator/framework"
)

// Rig is an SDK meter provider read by hand and a tracer provider that
// keeps every ended span in memory.
type Rig struct {
	Reader  *sdkmetric.ManualReader
	Meters  *sdkmetric.MeterProvider
	Spans   *tracetest.InMemoryExporter
	Tracers *sdktrace.TracerProvider
}

// New returns a rig, shut down at clean-up.
func New(t testing.TB) *Rig {
	r := NewUnmanaged()
	t.Cleanup(func() {
		ctx := context.Background()
		_ = r.Meters.Shutdown(ctx)
		_ = r.Tracers.Shutdown(ctx)
	})
	return r
}

// NewUnmanaged returns a rig that is never shut down (it starts no
// goroutine): for one that outlives a test, as the global providers do.
func NewUnmanaged() *Rig {
	r := &Rig{Reader: sdkmetric.NewManualReader(), Spans: tracetest.NewInMemoryExporter()}
	r.Meters = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.Reader))
	r.Tracers = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.Spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	return r
}

// Options are the client options that record to the rig.
func (r *Rig) Options(more ...framework.Option) []framework.Option {
	return append([]framework.Option{framework.WithMeterProvider(r.Meters), framework.WithTracerProvider(r.Tracers)}, more...)
}

// Point is one data point: its attributes and its value (a sum's value, a
// histogram's count and sum).
type Point struct {
	Attrs attribute.Set
	Value int64   // sums
	Count uint64  // histograms
	Sum   float64 // histograms
	Hist  bool
}

func (p Point) String() string {
	if p.Hist {
		return fmt.Sprintf("{%s count=%d sum=%g}", p.Attrs.Encoded(attribute.DefaultEncoder()), p.Count, p.Sum)
	}
	return fmt.Sprintf("{%s value=%d}", p.Attrs.Encoded(attribute.DefaultEncoder()), p.Value)
}

// Match reports whether the point has every one of attrs.
func (p Point) Match(attrs ...attribute.KeyValue) bool {
	for _, kv := range attrs {
		v, ok := p.Attrs.Value(kv.Key)
		if !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// Points collects and returns every data point of the metric name, in every
// scope.
func (r *Rig) Points(t testing.TB, name string) []Point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect: %v", err)
	}
	var out []Point
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					out = append(out, Point{Attrs: dp.Attributes, Value: dp.Value})
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					out = append(out, Point{Attrs: dp.Attributes, Count: dp.Count, Sum: dp.Sum, Hist: true})
				}
			default:
				t.Fatalf("metric %s: unexpected data %T", name, m.Data)
			}
		}
	}
	return out
}

// Sum is the total of the sum metric name over its points that have attrs.
func (r *Rig) Sum(t testing.TB, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	var n int64
	for _, p := range r.Points(t, name) {
		if p.Match(attrs...) {
			n += p.Value
		}
	}
	return n
}

// Count is the number of samples of the histogram name over its points
// that have attrs.
func (r *Rig) Count(t testing.TB, name string, attrs ...attribute.KeyValue) uint64 {
	t.Helper()
	var n uint64
	for _, p := range r.Points(t, name) {
		if p.Match(attrs...) {
			n += p.Count
		}
	}
	return n
}

// WaitSum waits until Sum(name, attrs) is want, or fails after d.
func (r *Rig) WaitSum(t testing.TB, d time.Duration, want int64, name string, attrs ...attribute.KeyValue) {
	t.Helper()
	r.wait(t, d, name, func() (bool, string) {
		got := r.Sum(t, name, attrs...)
		return got == want, fmt.Sprintf("%d, want %d", got, want)
	})
}

// WaitCount waits until Count(name, attrs) is want, or fails after d.
func (r *Rig) WaitCount(t testing.TB, d time.Duration, want uint64, name string, attrs ...attribute.KeyValue) {
	t.Helper()
	r.wait(t, d, name, func() (bool, string) {
		got := r.Count(t, name, attrs...)
		return got == want, fmt.Sprintf("%d, want %d", got, want)
	})
}

func (r *Rig) wait(t testing.TB, d time.Duration, name string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s after %v; points: %v", name, msg, d, r.Points(t, name))
		}
		time.Sleep(20 * time.Millisecond) // a polling interval, not synchronization
	}
}

// HasKey reports whether any point of name carries the attribute key.
func (r *Rig) HasKey(t testing.TB, name string, key attribute.Key) bool {
	t.Helper()
	return slices.ContainsFunc(r.Points(t, name), func(p Point) bool { return p.Attrs.HasValue(key) })
}

// Ended returns the ended spans named name (every span if name is "").
func (r *Rig) Ended(name string) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range r.Spans.GetSpans() {
		if name == "" || s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Attr returns the value of a span's attribute key, and whether it has it.
func Attr(s tracetest.SpanStub, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// ChildrenOf returns the ended spans whose parent is s.
func (r *Rig) ChildrenOf(s tracetest.SpanStub) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, c := range r.Spans.GetSpans() {
		if c.Parent.SpanID() == s.SpanContext.SpanID() && c.Parent.TraceID() == s.SpanContext.TraceID() {
			out = append(out, c)
		}
	}
	return out
}

// Names lists span names, for failure messages.
func Names(spans tracetest.SpanStubs) string {
	names := make([]string, len(spans))
	for i, s := range spans {
		kind := ""
		if s.SpanKind == trace.SpanKindClient {
			kind = "(client)"
		}
		names[i] = s.Name + kind
	}
	return strings.Join(names, " ")
}
