package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Scopes of the recipes that keep state rather than hold something.
const (
	ScopeCache = "github.com/gocurator/curator/recipes/cache"
	ScopeNodes = "github.com/gocurator/curator/recipes/nodes"
)

// The metric names of the caches and the persistent nodes (see framework's
// package documentation).
const (
	MetricCacheSize       = "curator.cache.size"
	MetricCacheEvents     = "curator.cache.events"
	MetricCacheRebuilds   = "curator.cache.rebuilds"
	MetricNodeRecreations = "curator.node.recreations"
)

// KeyCacheEvent is the type of a cache's event (curator.cache.event.type).
const KeyCacheEvent = attribute.Key("curator.cache.event.type")

// The values of curator.recipe for the caches and the persistent nodes.
const (
	RecipeCache          = "cache"
	RecipePersistentNode = "persistent_node"
)

// CacheEvent is the type of a cache's event, the value of
// curator.cache.event.type.
type CacheEvent uint8

// The cache event types (recipes/cache's EventType).
const (
	CacheCreated CacheEvent = iota
	CacheChanged
	CacheDeleted
	CacheInitialized
	CacheRebuilt
	numCacheEvents
)

var cacheEventNames = [numCacheEvents]string{"created", "changed", "deleted", "initialized", "rebuilt"}

func (e CacheEvent) String() string { return cacheEventNames[e] }

type stateInstruments struct {
	size        metric.Int64UpDownCounter
	events      metric.Int64Counter
	rebuilds    metric.Int64Counter
	recreations metric.Int64Counter
}

// stateIns returns the instruments of the caches and nodes, made on first
// use (most clients have neither).
func (p *Provider) stateIns() *stateInstruments {
	p.state.once.Do(func() {
		c, n := p.meter(ScopeCache), p.meter(ScopeNodes)
		p.state.ins = &stateInstruments{
			size: upDown(c, MetricCacheSize, "{node}", "Nodes held by caches now (a closed cache counts none)."),
			events: counter(c, MetricCacheEvents, "{event}",
				"Events delivered by caches, by type (a coalesced burst of changes is one)."),
			rebuilds: counter(c, MetricCacheRebuilds, "{rebuild}",
				"Full re-reads of a cache begun after a session loss."),
			recreations: counter(n, MetricNodeRecreations, "{node}",
				"Nodes a PersistentNode made again after they went (deleted by someone, or with a lost session)."),
		}
	})
	return p.state.ins
}

// Cache is the telemetry of one cache; nil records nothing (its methods
// are then no-ops).
type Cache struct {
	ins    *stateInstruments
	base   *attrs
	events [numCacheEvents]*attrs
	size   level // curator.cache.size
}

// level is what one recipe adds to an up-down counter that sums a level
// over recipes (a cache's size, its instances): moved by the difference
// with what it recorded last, so that it is right even when recording
// started after the recipe (an SDK installed later), and taken out for
// good at close.
type level struct {
	c        metric.Int64UpDownCounter
	set      *attrs
	mu       sync.Mutex
	recorded int64 // what this recipe has added
	closed   bool
}

// to records that the level is n now. Called with every change (in the
// order of the changes).
func (l *level) to(n int) {
	ctx := context.Background()
	if !l.c.Enabled(ctx) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || int64(n) == l.recorded {
		return
	}
	l.c.Add(ctx, int64(n)-l.recorded, l.set.add...)
	l.recorded = int64(n)
}

// close takes what the recipe added out, for good.
func (l *level) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed && l.recorded != 0 {
		l.c.Add(context.Background(), -l.recorded, l.set.add...)
	}
	l.closed, l.recorded = true, 0
}

// Cache returns the telemetry of a cache of path (recorded only with path
// attributes).
func (p *Provider) Cache(path string) *Cache {
	if p == nil {
		return nil
	}
	kvs := []attribute.KeyValue{KeyRecipe.String(RecipeCache)}
	if p.paths {
		kvs = append(kvs, KeyPath.String(path))
	}
	ins := p.stateIns()
	c := &Cache{ins: ins, base: newAttrs(kvs...)}
	c.size = level{c: ins.size, set: c.base}
	for e := range numCacheEvents {
		c.events[e] = newAttrs(append(append([]attribute.KeyValue(nil), kvs...), KeyCacheEvent.String(e.String()))...)
	}
	return c
}

// Size records that the cache holds n nodes now. Called with every change
// of its size (in the order of the changes).
func (c *Cache) Size(n int) {
	if c != nil {
		c.size.to(n)
	}
}

// Closed takes the cache's nodes out of curator.cache.size, for good.
func (c *Cache) Closed() {
	if c != nil {
		c.size.close()
	}
}

// Event counts one delivered event of type e.
func (c *Cache) Event(e CacheEvent) {
	if c == nil || e >= numCacheEvents {
		return
	}
	ctx := context.Background()
	if c.ins.events.Enabled(ctx) {
		c.ins.events.Add(ctx, 1, c.events[e].add...)
	}
}

// Rebuild counts a full re-read begun.
func (c *Cache) Rebuild() {
	if c == nil {
		return
	}
	ctx := context.Background()
	if c.ins.rebuilds.Enabled(ctx) {
		c.ins.rebuilds.Add(ctx, 1, c.base.add...)
	}
}

// NodeRecreated counts a PersistentNode of path made again (rare: the
// attribute set is looked up, or built with path attributes, per call).
func (p *Provider) NodeRecreated(path string) {
	if p == nil {
		return
	}
	ins := p.stateIns()
	ctx := context.Background()
	if !ins.recreations.Enabled(ctx) {
		return
	}
	if l, ok := p.nodeLabels.Load(path); ok { // a discovery registration's (discovery.go)
		ins.recreations.Add(ctx, 1, l.(*attrs).add...)
		return
	}
	kv := KeyRecipe.String(RecipePersistentNode)
	if !p.paths {
		ins.recreations.Add(ctx, 1, p.set("recipe."+RecipePersistentNode, kv).add...)
		return
	}
	ins.recreations.Add(ctx, 1, metric.WithAttributes(kv, KeyPath.String(path)))
}
