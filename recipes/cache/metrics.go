package cache

import "github.com/gocurator/curator/internal/telemetry"

// The cache's metrics (framework's package documentation lists them):
// curator.cache.size, curator.cache.events by type, curator.cache.rebuilds.
// The hooks in cache.go and deliver.go are one line each:
//   - sized, with c.mu held, after every change of c.nodes' size, so that
//     the sizes recorded follow the changes in order;
//   - Rebuild when a rebuild begins (loop), Closed at Close;
//   - delivered, once per event, on the delivery goroutine.

func newMetrics(c *Cache) *telemetry.Cache {
	return telemetry.ForClient(c.client).Cache(c.root)
}

// sized records the cache's size; c.mu is held.
func (c *Cache) sized() { c.met.Size(len(c.nodes)) }

// delivered counts an event delivered.
func (c *Cache) delivered(ev Event) {
	var e telemetry.CacheEvent
	switch ev.Type {
	case EventCreated:
		e = telemetry.CacheCreated
	case EventChanged:
		e = telemetry.CacheChanged
	case EventDeleted:
		e = telemetry.CacheDeleted
	case EventInitialized:
		e = telemetry.CacheInitialized
	case EventRebuilt:
		e = telemetry.CacheRebuilt
	default:
		return
	}
	c.met.Event(e)
}
