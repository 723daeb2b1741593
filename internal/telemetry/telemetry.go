// Package telemetry is the module's OpenTelemetry machinery: the
// instruments, the attribute sets, the spans and the rules for recording
// them cheaply. The framework and the recipes call its small functions at
// their hook points; nothing else of the module knows OpenTelemetry. It is
// internal: the metrics and spans themselves are documented for users in
// the package documentation of framework ("Metrics and traces").
//
// Cost when nothing records: every hook first asks the instruments it would
// use whether they are enabled (metric.Float64Histogram.Enabled and so on,
// false for the global delegate until the application installs an SDK, and
// for the no-op providers) and whether a tracer provider is set; if none
// is, it returns at once, without reading the clock, building an attribute
// or allocating. Attribute sets are built once (per client and recipe kind,
// or per recipe path with path attributes) and reused.
package telemetry

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
)

// Instrumentation scopes: one per instrumenting package (OpenTelemetry's
// contrib rule), so that an SDK view can drop a recipe's telemetry alone.
const (
	ScopeFramework = "github.com/gocurator/curator/framework"
	ScopeLocks     = "github.com/gocurator/curator/recipes/locks"
	ScopeSemaphore = "github.com/gocurator/curator/recipes/semaphore"
	ScopeMultiLock = "github.com/gocurator/curator/recipes/multilock"
	ScopeLeader    = "github.com/gocurator/curator/recipes/leader"
)

// SchemaURL is the semantic conventions' schema the attribute names follow.
const SchemaURL = semconv.SchemaURL

// Config is what a client was configured with.
type Config struct {
	// MeterProvider: nil means the global one (otel.GetMeterProvider),
	// which records nothing until the application installs an SDK.
	MeterProvider metric.MeterProvider
	// TracerProvider: nil means the global one; spans are started only once
	// the application has set a provider (globally or here).
	TracerProvider trace.TracerProvider
	// Paths adds the recipe path (curator.path) to the recipes' metrics and
	// spans, and the znode path (zookeeper.path) to the ZooKeeper spans.
	Paths bool
	// Namespace is db.namespace: the client's chroot and namespace ("" for
	// none).
	Namespace string
}

// Provider is the telemetry of one client: its providers, its instruments
// (created once, at New) and its attribute sets. A nil *Provider records
// nothing.
type Provider struct {
	mp        metric.MeterProvider
	tp        trace.TracerProvider // nil: follow the global provider
	traceOn   bool                 // with an explicit tp: whether it can record at all
	paths     bool
	namespace string

	zk zkInstruments

	scopes [numScopes]struct {
		once sync.Once
		ins  *recipeInstruments
	}
	kinds [numKinds]struct {
		once sync.Once
		sets *recipeSets
	}
	state struct { // the caches' and nodes' (cache.go)
		once sync.Once
		ins  *stateInstruments
	}
	discovery struct { // discovery.go
		once sync.Once
		ins  metric.Int64UpDownCounter
	}
	queue struct { // the queues' (queue.go)
		once sync.Once
		ins  *queueInstruments
	}
	atomic struct { // the atomic counters' (atomic.go)
		once sync.Once
		ins  *atomicInstruments
	}
	nodeLabels sync.Map // node path -> *attrs: the PersistentNodes of other recipes (discovery.go)
	pathSets   sync.Map // pathKey -> *recipeSets, with path attributes only
	sets       sync.Map // string -> *attrs: session states, expiry sources
}

// New returns the telemetry of a client configured with cfg; it creates the
// client's instruments now.
func New(cfg Config) *Provider {
	p := &Provider{mp: cfg.MeterProvider, tp: cfg.TracerProvider, paths: cfg.Paths, namespace: cfg.Namespace}
	if p.mp == nil {
		p.mp = otel.GetMeterProvider()
	}
	if p.tp != nil {
		_, isNoop := p.tp.(tracenoop.TracerProvider)
		p.traceOn = !isNoop
	}
	p.zk.init(p)
	return p
}

// global is the telemetry of the global providers, for recipes that reach
// no client (a MultiLock of lockers of another module).
var global = sync.OnceValue(func() *Provider { return New(Config{}) })

// Global returns the telemetry of the global providers, without path
// attributes.
func Global() *Provider { return global() }

// Paths reports whether path attributes were asked for.
func (p *Provider) Paths() bool { return p != nil && p.paths }

func (p *Provider) meter(scope string) metric.Meter {
	return p.mp.Meter(scope, metric.WithSchemaURL(SchemaURL))
}

func (p *Provider) tracer(scope string) trace.Tracer {
	tp := p.tp
	if tp == nil {
		// The global's Tracer delegates to the SDK the application installs
		// later, if it has installed none yet.
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(scope, trace.WithSchemaURL(SchemaURL))
}

// globalDelegate is the global tracer provider as OpenTelemetry starts it:
// a delegate that records nothing until SetTracerProvider. Nil if something
// had set a provider before this package was initialised.
var globalDelegate = func() trace.TracerProvider {
	tp := otel.GetTracerProvider()
	if fmt.Sprintf("%T", tp) == "*global.tracerProvider" {
		return tp
	}
	return nil
}()

// tracing reports whether spans can be recorded: a tracer provider was
// given to the client (not a no-op one), or the application has set the
// global one. Two loads and a compare: callers ask it before they build
// anything for a span.
func (p *Provider) tracing() bool {
	if p.tp != nil {
		return p.traceOn
	}
	tp := otel.GetTracerProvider()
	if tp == globalDelegate {
		return false
	}
	_, isNoop := tp.(tracenoop.TracerProvider)
	return !isNoop
}

// Instrument constructors: each handles the (never expected) error.

func histogram(m metric.Meter, name, unit, desc string, buckets []float64) metric.Float64Histogram {
	h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
	handle(err)
	return h
}

func counter(m metric.Meter, name, unit, desc string) metric.Int64Counter {
	c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	handle(err)
	return c
}

func upDown(m metric.Meter, name, unit, desc string) metric.Int64UpDownCounter {
	c, err := m.Int64UpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	handle(err)
	return c
}

// count adds one to c with the one attribute kv (its set cached under key),
// if c records.
func (p *Provider) count(c metric.Int64Counter, key string, kv attribute.KeyValue) {
	ctx := context.Background()
	if !c.Enabled(ctx) {
		return
	}
	c.Add(ctx, 1, p.set(key, kv).add...)
}

// handle reports an error of instrument creation the OpenTelemetry way (the
// instrument returned is usable all the same).
func handle(err error) {
	if err != nil {
		otel.Handle(err)
	}
}

// attrs is an attribute set with the measurement options that carry it,
// built once: recording with them allocates nothing of ours.
type attrs struct {
	set attribute.Set
	add []metric.AddOption
	rec []metric.RecordOption
}

func newAttrs(kvs ...attribute.KeyValue) *attrs {
	a := &attrs{set: attribute.NewSet(kvs...)}
	opt := metric.WithAttributeSet(a.set)
	a.add, a.rec = []metric.AddOption{opt}, []metric.RecordOption{opt}
	return a
}

// set returns the attributes of the given key-values, built once per
// provider for each distinct key (a small, fixed vocabulary).
func (p *Provider) set(key string, kvs ...attribute.KeyValue) *attrs {
	if v, ok := p.sets.Load(key); ok {
		return v.(*attrs)
	}
	v, _ := p.sets.LoadOrStore(key, newAttrs(kvs...))
	return v.(*attrs)
}

// ctxOr is ctx, or context.Background for a nil one (instruments and
// tracers are given a context; callers may have none).
func ctxOr(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
