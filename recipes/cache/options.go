package cache

import "github.com/gocurator/curator/internal/recipe"

// Option configures a Cache.
type Option func(*options)

type options struct {
	recipe.Options // its Fail and Apply (Data and the rest unused)
	noData         bool
	filter         func(path string) bool
	maxDepth       int
}

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
