package cache

import "github.com/gocurator/curator/internal/recipe"

// Option configures a Cache.
type Option func(*options)

type options struct {
	recipe.Options // its Fail and Apply (Data and the rest unused)
	noData         bool
	filter         func(path string) bool
	maxDepth       int
	oneShot        bool
}

// WithOneShotWatches makes the cache use one-shot watches (a data watch
// per cached node, a child watch per cached parent: TreeCache's way, and
// Curator's CuratorCache compatibility mode) instead of one persistent
// recursive watch on its root (CuratorCache's way), which is the default
// on servers that have it (ZooKeeper 3.6+) and falls back to one-shot
// watches on those that do not. For a server where persistent watches are
// a concern (ZOOKEEPER-4466 on 3.6-3.8 is handled by the framework; this
// is the way out if another is found), or a cache of a few nodes only.
func WithOneShotWatches() Option { return func(o *options) { o.oneShot = true } }

// WithoutData caches stats only (Curator's dataNotCached): Node.Data is nil.
func WithoutData() Option { return func(o *options) { o.noData = true } }

// WithFilter caches, and descends into, only the paths below the root for
// which keep returns true (Curator's TreeCacheSelector, both questions in
// one). The root is always cached.
func WithFilter(keep func(path string) bool) Option {
	return func(o *options) {
		if keep == nil {
			o.Fail("nil filter")
		}
		o.filter = keep
	}
}

// WithMaxDepth caches d levels below the root: 0 the root alone (Curator's
// NodeCache), 1 the root and its children (PathChildrenCache, which leaves
// the root out), more for a TreeCache of that depth; the default, -1, is
// the whole subtree (CuratorCache).
func WithMaxDepth(d int) Option {
	return func(o *options) {
		if d < -1 {
			o.Fail("max depth %d", d)
		}
		o.maxDepth = d
	}
}
