// Package cache holds Curator's caches for Go: Cache, a node and its
// subtree kept in memory and up to date with events (Curator 5's
// CuratorCache), which with WithMaxDepth is also the classic NodeCache
// (depth 0), PathChildrenCache (depth 1) and TreeCache (depth d).
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
package cache
