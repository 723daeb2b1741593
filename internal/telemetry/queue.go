package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeQueue is the instrumentation scope of the queues.
const ScopeQueue = "github.com/gocurator/curator/recipes/queue"

// The queues' metric names (see framework's package documentation).
const (
	MetricQueueDepth = "curator.queue.depth"
	MetricQueueAge   = "curator.queue.oldest.age"
	MetricQueueItems = "curator.queue.items"
)

// KeyQueueOp is what happened to queue items (curator.queue.op): "put",
// "consumed".
const KeyQueueOp = attribute.Key("curator.queue.op")

// RecipeQueue is the value of curator.recipe for the queues.
const RecipeQueue = "queue"

var queueAgeBuckets = []float64{0.001, 0.01, 0.1, 1, 10, 60, 300, 1800, 3600, 86400}

type queueInstruments struct {
	depth metric.Int64UpDownCounter
	age   metric.Float64Histogram
	items metric.Int64Counter
}

func (p *Provider) queueIns() *queueInstruments {
	p.queue.once.Do(func() {
		m := p.meter(ScopeQueue)
		p.queue.ins = &queueInstruments{
			depth: upDown(m, MetricQueueDepth, "{item}",
				"Item nodes in the queues this process consumes, as each consumer's last listing saw them (a closed queue counts none)."),
			age: histogram(m, MetricQueueAge, "s",
				"Age of the oldest item of a queue, each time a consumer takes it: the time from its put to its take.", queueAgeBuckets),
			items: counter(m, MetricQueueItems, "{item}", "Queue items put and consumed, by curator.queue.op."),
		}
	})
	return p.queue.ins
}

// Queue is the telemetry of one queue; nil records nothing.
type Queue struct {
	ins           *queueInstruments
	base          *attrs
	put, consumed *attrs
	depth         level // curator.queue.depth
}

// Queue returns the telemetry of a queue of path (recorded only with path
// attributes).
func (p *Provider) Queue(path string) *Queue {
	if p == nil {
		return nil
	}
	kvs := []attribute.KeyValue{KeyRecipe.String(RecipeQueue)}
	if p.paths {
		kvs = append(kvs, KeyPath.String(path))
	}
	with := func(op string) *attrs {
		return newAttrs(append(append([]attribute.KeyValue(nil), kvs...), KeyQueueOp.String(op))...)
	}
	ins, base := p.queueIns(), newAttrs(kvs...)
	return &Queue{ins: ins, base: base, put: with("put"), consumed: with("consumed"), depth: level{c: ins.depth, set: base}}
}

// Depth records that a listing of the queue found n items.
func (q *Queue) Depth(n int) {
	if q != nil {
		q.depth.to(n)
	}
}

// Closed takes the queue out of curator.queue.depth, for good.
func (q *Queue) Closed() {
	if q != nil {
		q.depth.close()
	}
}

// Taken records the age of the item taken (the oldest due one).
func (q *Queue) Taken(age time.Duration) {
	if q == nil {
		return
	}
	q.ins.age.Record(context.Background(), max(age, 0).Seconds(), q.base.rec...)
}

// Put counts n items put.
func (q *Queue) Put(n int) {
	if q != nil {
		q.ins.items.Add(context.Background(), int64(n), q.put.add...)
	}
}

// Consumed counts an item consumed (its consumer returned nil).
func (q *Queue) Consumed() {
	if q != nil {
		q.ins.items.Add(context.Background(), 1, q.consumed.add...)
	}
}
