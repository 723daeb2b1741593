package discovery

import "github.com/gocurator/curator/internal/telemetry"

// Discovery's metrics (framework's package documentation lists them), a
// one-line hook each in cache.go and discovery.go:
//   - curator.discovery.instances, by service: a Cache's instances, set
//     (counted) with sc.mu held after every change of sc.instances, and
//     taken out at Close;
//   - a registration restored: its PersistentNode made again, counted by
//     recipes/nodes in curator.node.recreations, as a discovery
//     registration of its service (labelled) while registered here.

func (d *Discovery[T]) cacheMetrics(name string) *telemetry.DiscoveryCache {
	return telemetry.ForClient(d.client).DiscoveryCache(name, d.servicePath(name))
}

// counted records the cache's number of instances; sc.mu is held.
func (sc *Cache[T]) counted() { sc.met.Instances(len(sc.instances)) }

// labelled makes the re-creations of the node at path count as restored
// registrations of the service name, until the func it returns is called
// (after the node's Close).
func (d *Discovery[T]) labelled(path, name string) (done func()) {
	return telemetry.ForClient(d.client).Registration(path, name)
}
