package main

import (
	"context"
	"errors"
	"time"
)

// The Go peers behind one set of workloads (workloads.go, waiters.go), so
// that gocurator and go-zookeeper run exactly the same code around their
// recipes. gocurator.go and gozk.go are the only files that touch either
// library.

// library opens sessions of one Go peer.
type library interface {
	impl() string // name and version, for the results
	connect(ctx context.Context, connect string, timeout time.Duration) (session, error)
}

// session is one client with one ZooKeeper session.
type session interface {
	mutex(path string) (locker, error)
	semaphore(path string, leases int) (leaser, error) // errNoRecipe if the library has none
	rwlock(path string) (rwLocker, error)              // errNoRecipe if the library has none
	children(ctx context.Context, path string) (int, error)
	close()
}

// locker is one lock object (one contender).
type locker interface {
	lock(ctx context.Context) error
	unlock(ctx context.Context) error
}

// leaser is one semaphore object; release returns the lease acquired.
type leaser interface {
	acquire(ctx context.Context) (release func(context.Context) error, err error)
}

type rwLocker interface {
	read() locker
	write() locker
}

// errNoRecipe: the library has no such recipe; the workload reports n/a.
var errNoRecipe = errors.New("no such recipe in this library")

var goLibraries = map[string]library{
	"gocurator": gocuratorLib{},
	"gozk":      gozkLib{},
}

// cacheSession is a session of a library with a cache (gocurator; not
// go-zookeeper): the cache workloads (cache.go) use it.
type cacheSession interface {
	// cache makes a cache of path and its whole subtree, not started; fn
	// gets every event, on the cache's delivery goroutine.
	cache(path string, fn func(cacheEvent)) (treeCache, error)
	get(ctx context.Context, path string) ([]byte, error)
	list(ctx context.Context, path string) ([]string, error)
}

// treeCache is one cache.
type treeCache interface {
	start(ctx context.Context) error // returns once the first load is done
	data(path string) ([]byte, bool) // the cached data at path
	close()
}

type cacheEventKind int

const (
	cacheCreated cacheEventKind = iota + 1
	cacheChanged
	cacheDeleted
	cacheInitialized
)

// cacheEvent is a cache's event: data is the node's new data (created,
// changed).
type cacheEvent struct {
	kind cacheEventKind
	path string
	data []byte
}
