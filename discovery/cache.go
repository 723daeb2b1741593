package discovery

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"sync"

	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/recipes/cache"
)

// Cache is Curator's ServiceCache: the instances of one service, kept in
// memory and up to date by a recipes/cache Cache of <base>/<name> (its
// children), with change events.
//
// Differences from Curator, on purpose: Start waits under a context (Curator
// blocks with no timeout); the service's node is never made by the cache
// (Curator makes it a container: CURATOR-319's kind of surprise), a missing
// one is waited for; a node whose bytes are no instance is left out and
// logged, never taken for one (CURATOR-574); after a session loss the cache
// reads everything again and reports only real differences, so a consumer
// (a gRPC resolver) never sees the list empty for a rebuild.
type Cache[T any] struct {
	d    *Discovery[T]
	name string
	c    *cache.Cache
	met  *telemetry.DiscoveryCache

	mu        sync.Mutex
	instances map[string]Instance[T] // by id
	snap      *snapshot[T]           // sorted by id, shared read-only; nil: to be made again
	listeners recipe.Listeners[Event[T]]
	ready     chan struct{} // closed on the cache's EventInitialized
	remove    func()
}

// Event is a change of a service's instances as a Cache consumer sees it:
// cache.EventCreated (New set), EventChanged (Old and New), EventDeleted
// (Old), then EventInitialized once after the first load and
// EventRebuilt after each session loss (neither with an instance).
type Event[T any] struct {
	Type     cache.EventType
	ID       string
	Old, New *Instance[T]
}

// NewCache returns a Cache of the instances of service name, not started.
func (d *Discovery[T]) NewCache(name string) (*Cache[T], error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c, err := cache.New(d.client, d.servicePath(name), cache.WithMaxDepth(1))
	if err != nil {
		return nil, err
	}
	sc := &Cache[T]{d: d, name: name, c: c, met: d.cacheMetrics(name), instances: map[string]Instance[T]{},
		ready: make(chan struct{})}
	sc.remove = c.AddListener(sc.event)
	return sc, nil
}

// Start starts the cache and waits until its first load was delivered, or
// ctx ends (its error; the cache goes on loading). Starting twice is
// curator.ErrBusy; after Close curator.ErrClosed.
func (sc *Cache[T]) Start(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	if err := sc.c.Start(ctx); err != nil {
		return fmt.Errorf("discovery cache of %s: %w", sc.name, err)
	}
	select {
	case <-sc.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("discovery cache of %s: %w", sc.name, ctx.Err())
	}
}

// Initialized returns a channel closed once the first load was delivered.
func (sc *Cache[T]) Initialized() <-chan struct{} { return sc.ready }

// Instances returns the service's instances, sorted by id.
func (sc *Cache[T]) Instances() []Instance[T] { return slices.Clone(sc.snapshot().all) }

// snapshot is the instances sorted by id, and their ids: made once per
// change and shared read-only, so that a Provider picks one per call
// without copying or sorting them (Curator's ServiceCache hands out a list
// of references; a copy and a sort per call made ours 16x slower, bench
// discoveryquery).
type snapshot[T any] struct {
	all     []Instance[T]
	ids     []string
	enabled bool // every instance is enabled
}

func (sc *Cache[T]) snapshot() *snapshot[T] {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.snap != nil {
		return sc.snap
	}
	sn := &snapshot[T]{all: make([]Instance[T], 0, len(sc.instances)), enabled: true}
	for _, in := range sc.instances {
		sn.all = append(sn.all, in)
	}
	sort.Slice(sn.all, func(i, j int) bool { return sn.all[i].ID < sn.all[j].ID })
	sn.ids = make([]string, len(sn.all))
	for i, in := range sn.all {
		sn.ids[i] = in.ID
		if in.Disabled {
			sn.enabled = false
		}
	}
	sc.snap = sn
	return sn
}

// Instance returns the instance id, if the cache has it.
func (sc *Cache[T]) Instance(id string) (Instance[T], bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	in, ok := sc.instances[id]
	return in, ok
}

// AddListener adds fn, called on the cache's delivery goroutine for every
// change from now on (Curator's ServiceCacheListener.cacheChanged, with
// the change); remove removes it. fn must not call Close.
func (sc *Cache[T]) AddListener(fn func(Event[T])) (remove func()) {
	return sc.listeners.Add(fn)
}

// Close stops the cache; its instances stay readable. Closing twice is a
// no-op.
func (sc *Cache[T]) Close() error {
	err := sc.c.Close()
	sc.met.Closed()
	return err
}

// event turns a node event of the underlying cache into an instance event.
func (sc *Cache[T]) event(e cache.Event) {
	switch e.Type {
	case cache.EventInitialized, cache.EventRebuilt:
		if e.Type == cache.EventInitialized {
			close(sc.ready)
		}
		sc.tell(Event[T]{Type: e.Type})
		return
	}
	if path.Dir(e.Path) != sc.d.servicePath(sc.name) {
		return // the service's node itself
	}
	id := path.Base(e.Path)
	var ev Event[T]
	ev.ID = id
	sc.mu.Lock()
	if old, ok := sc.instances[id]; ok {
		ev.Old = &old
	}
	if e.New != nil {
		var in Instance[T]
		if err := in.Unmarshal(e.New.Data); err != nil {
			sc.d.client.Logger().Warn("discovery: a node that is no instance, left out",
				"path", e.Path, "err", err)
			delete(sc.instances, id)
		} else {
			sc.instances[id] = in
			ev.New = &in
		}
	} else {
		delete(sc.instances, id)
	}
	sc.snap = nil
	sc.counted()
	sc.mu.Unlock()
	switch {
	case ev.Old == nil && ev.New == nil:
		return
	case ev.Old == nil:
		ev.Type = cache.EventCreated
	case ev.New == nil:
		ev.Type = cache.EventDeleted
	default:
		ev.Type = cache.EventChanged
	}
	sc.tell(ev)
}

func (sc *Cache[T]) tell(ev Event[T]) {
	for _, fn := range sc.listeners.Snapshot() {
		fn(ev)
	}
}
