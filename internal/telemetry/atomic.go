package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeAtomic is the scope of recipes/atomic's metrics.
const ScopeAtomic = "github.com/gocurator/curator/recipes/atomic"

// The metric names of the atomic values (see framework's package
// documentation).
const (
	MetricAtomicRetries    = "curator.atomic.retries"
	MetricAtomicPromotions = "curator.atomic.promotions"
)

// RecipeAtomic is the value of curator.recipe for the atomic values.
const RecipeAtomic = "atomic"

type atomicInstruments struct {
	retries    metric.Int64Counter
	promotions metric.Int64Counter
}

func (p *Provider) atomicIns() *atomicInstruments {
	p.atomic.once.Do(func() {
		m := p.meter(ScopeAtomic)
		p.atomic.ins = &atomicInstruments{
			retries: counter(m, MetricAtomicRetries, "{retry}",
				"Compare-and-set writes of atomic values tried again after another writer came first."),
			promotions: counter(m, MetricAtomicPromotions, "{promotion}",
				"Atomic value operations promoted to the lock after their optimistic tries gave up."),
		}
	})
	return p.atomic.ins
}

// Atomic is the telemetry of one atomic value; nil records nothing.
type Atomic struct {
	ins  *atomicInstruments
	base *attrs
}

// Atomic returns the telemetry of an atomic value at path (recorded only
// with path attributes).
func (p *Provider) Atomic(path string) *Atomic {
	if p == nil {
		return nil
	}
	kvs := []attribute.KeyValue{KeyRecipe.String(RecipeAtomic)}
	if p.paths {
		kvs = append(kvs, KeyPath.String(path))
	}
	return &Atomic{ins: p.atomicIns(), base: newAttrs(kvs...)}
}

// Retries counts n compare-and-set writes tried again after a conflict.
func (a *Atomic) Retries(n int) {
	if a == nil || n <= 0 {
		return
	}
	ctx := context.Background()
	if a.ins.retries.Enabled(ctx) {
		a.ins.retries.Add(ctx, int64(n), a.base.add...)
	}
}

// Promoted counts an operation promoted to the lock.
func (a *Atomic) Promoted() {
	if a == nil {
		return
	}
	ctx := context.Background()
	if a.ins.promotions.Enabled(ctx) {
		a.ins.promotions.Add(ctx, 1, a.base.add...)
	}
}
