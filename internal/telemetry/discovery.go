package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
)

// ScopeDiscovery is the scope of service discovery's metrics.
const ScopeDiscovery = "github.com/gocurator/curator/discovery"

// MetricDiscoveryInstances is the instances of each service that discovery
// caches hold (see framework's package documentation).
const MetricDiscoveryInstances = "curator.discovery.instances"

// KeyService is a service's name (curator.discovery.service): on
// curator.discovery.instances, and on curator.node.recreations of a
// registration's node. Always recorded, unlike curator.path: a process
// registers and watches a few services, by name, not an instance id.
const KeyService = attribute.Key("curator.discovery.service")

// RecipeDiscovery is the value of curator.recipe for service discovery.
const RecipeDiscovery = "discovery"

// DiscoveryCache is the telemetry of one discovery cache (of one
// service); nil records nothing.
type DiscoveryCache struct {
	instances level // curator.discovery.instances
}

// DiscoveryCache returns the telemetry of a cache of the service name,
// whose instances are under path (recorded only with path attributes).
func (p *Provider) DiscoveryCache(name, path string) *DiscoveryCache {
	if p == nil {
		return nil
	}
	p.discovery.once.Do(func() {
		p.discovery.ins = upDown(p.meter(ScopeDiscovery), MetricDiscoveryInstances, "{instance}",
			"Instances of a service held by started discovery caches now (a closed cache counts none).")
	})
	return &DiscoveryCache{instances: level{c: p.discovery.ins, set: newAttrs(p.discoveryAttrs(name, path)...)}}
}

func (p *Provider) discoveryAttrs(name, path string) []attribute.KeyValue {
	kvs := []attribute.KeyValue{KeyRecipe.String(RecipeDiscovery), KeyService.String(name)}
	if p.paths {
		kvs = append(kvs, KeyPath.String(path))
	}
	return kvs
}

// Instances records that the cache holds n instances now. Called with
// every change of their number (in the order of the changes).
func (c *DiscoveryCache) Instances(n int) {
	if c != nil {
		c.instances.to(n)
	}
}

// Closed takes the cache's instances out of curator.discovery.instances,
// for good.
func (c *DiscoveryCache) Closed() {
	if c != nil {
		c.instances.close()
	}
}

// Registration makes the re-creations of the PersistentNode at path, a
// registration of an instance of the service name, count in
// curator.node.recreations as registrations restored: with curator.recipe
// = discovery and curator.discovery.service = name (and curator.path, the
// instance's node, with path attributes), not as a bare persistent_node's.
// done ends it (at Unregister, Close, or a failed Register).
func (p *Provider) Registration(path, name string) (done func()) {
	if p == nil {
		return func() {}
	}
	a := newAttrs(p.discoveryAttrs(name, path)...)
	p.nodeLabels.Store(path, a)
	return func() { p.nodeLabels.CompareAndDelete(path, a) }
}
