package main

// Every use of gocurator's API in the benchmark is in this file (and the
// server in server.go), so that API changes touch nothing else.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/recipes/locks"
	rqueue "github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/recipes/semaphore"
)

type gocuratorLib struct{}

func (gocuratorLib) impl() string { return "gocurator (this tree)" }

func (gocuratorLib) connect(ctx context.Context, connect string, timeout time.Duration) (session, error) {
	c, err := framework.New(connect, framework.WithSessionTimeout(timeout))
	if err != nil {
		return nil, err
	}
	if err := c.BlockUntilConnected(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("no session with %s: %w", connect, err)
	}
	return gocuratorSession{c}, nil
}

type gocuratorSession struct{ c *framework.Client }

func (s gocuratorSession) close() { s.c.Close() }

func (s gocuratorSession) mutex(path string) (locker, error) {
	m, err := locks.NewMutex(s.c, path)
	if err != nil {
		return nil, err
	}
	return gocuratorMutex{m}, nil
}

func (s gocuratorSession) semaphore(path string, leases int) (leaser, error) {
	sem, err := semaphore.New(s.c, path, leases)
	if err != nil {
		return nil, err
	}
	return gocuratorSemaphore{sem}, nil
}

func (s gocuratorSession) rwlock(path string) (rwLocker, error) {
	rw, err := locks.NewReadWriteLock(s.c, path)
	if err != nil {
		return nil, err
	}
	return gocuratorRW{rw}, nil
}

func (s gocuratorSession) children(ctx context.Context, path string) (int, error) {
	kids, _, err := s.c.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	return len(kids), err
}

func (s gocuratorSession) cache(path string, fn func(cacheEvent)) (treeCache, error) {
	ch, err := cache.New(s.c, path)
	if err != nil {
		return nil, err
	}
	ch.AddListener(func(ev cache.Event) {
		e := cacheEvent{path: ev.Path}
		switch ev.Type {
		case cache.EventCreated:
			e.kind, e.data = cacheCreated, ev.New.Data
		case cache.EventChanged:
			e.kind, e.data = cacheChanged, ev.New.Data
		case cache.EventDeleted:
			e.kind = cacheDeleted
		case cache.EventInitialized:
			e.kind = cacheInitialized
		default:
			return
		}
		fn(e)
	})
	return gocuratorCache{ch}, nil
}

func (s gocuratorSession) get(ctx context.Context, path string) ([]byte, error) {
	data, _, err := s.c.Get(ctx, path)
	return data, err
}

func (s gocuratorSession) list(ctx context.Context, path string) ([]string, error) {
	kids, _, err := s.c.Children(ctx, path)
	return kids, err
}

type gocuratorCache struct{ c *cache.Cache }

func (c gocuratorCache) start(ctx context.Context) error { return c.c.Start(ctx) }
func (c gocuratorCache) close()                          { c.c.Close() }

func (c gocuratorCache) data(path string) ([]byte, bool) {
	n, ok := c.c.Get(path)
	return n.Data, ok
}

// benchPayload is the payload of the discovery workloads' instances (a
// Java peer reads it as a Map).
type benchPayload = map[string]string

func (s gocuratorSession) discovery(base string) (serviceDiscovery, error) {
	d, err := discovery.New[benchPayload](s.c, base)
	if err != nil {
		return nil, err
	}
	return gocuratorDiscovery{d: d, c: s.c, base: base}, nil
}

type gocuratorDiscovery struct {
	d    *discovery.Discovery[benchPayload]
	c    *framework.Client
	base string
}

func (d gocuratorDiscovery) close() { d.d.Close() }

func (d gocuratorDiscovery) instances(ctx context.Context, name string) (int, error) {
	all, err := d.d.Instances(ctx, name)
	return len(all), err
}

func (d gocuratorDiscovery) ids(ctx context.Context, name string) ([]string, error) {
	kids, _, err := d.c.Children(ctx, d.base+"/"+name)
	return kids, err
}

func (d gocuratorDiscovery) cache(name string, fn func(cacheEventKind, string)) (serviceCache, error) {
	c, err := d.d.NewCache(name)
	if err != nil {
		return nil, err
	}
	if fn != nil {
		c.AddListener(func(ev discovery.Event[benchPayload]) {
			switch ev.Type {
			case cache.EventCreated:
				fn(cacheCreated, ev.ID)
			case cache.EventDeleted:
				fn(cacheDeleted, ev.ID)
			case cache.EventInitialized:
				fn(cacheInitialized, "")
			}
		})
	}
	return gocuratorServiceCache{c}, nil
}

func (d gocuratorDiscovery) provider(name string) (serviceProvider, error) {
	p, err := d.d.NewProvider(name)
	if err != nil {
		return nil, err
	}
	return gocuratorProvider{p}, nil
}

type gocuratorServiceCache struct {
	c *discovery.Cache[benchPayload]
}

func (c gocuratorServiceCache) start(ctx context.Context) error { return c.c.Start(ctx) }
func (c gocuratorServiceCache) instances() int                  { return len(c.c.Instances()) }
func (c gocuratorServiceCache) close()                          { c.c.Close() }

func (c gocuratorServiceCache) ids() []string {
	var ids []string
	for _, in := range c.c.Instances() {
		ids = append(ids, in.ID)
	}
	return ids
}

type gocuratorProvider struct {
	p *discovery.Provider[benchPayload]
}

func (p gocuratorProvider) start(ctx context.Context) error { return p.p.Start(ctx) }
func (p gocuratorProvider) close()                          { p.p.Close() }

func (p gocuratorProvider) instance() bool {
	_, ok := p.p.Instance()
	return ok
}

// gocuratorMutex is any of our locks: a Mutex, a ReadLock, a WriteLock.
// Any error of Unlock fails the run: by the release rule (package
// curator) it is a loss or a misuse.
type gocuratorMutex struct{ m curator.Locker }

func (m gocuratorMutex) lock(ctx context.Context) error   { return m.m.Lock(ctx) }
func (m gocuratorMutex) unlock(ctx context.Context) error { return m.m.Unlock(ctx) }

type gocuratorSemaphore struct{ s *semaphore.Semaphore }

func (s gocuratorSemaphore) acquire(ctx context.Context) (func(context.Context) error, error) {
	l, err := s.s.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

type gocuratorRW struct{ rw *locks.ReadWriteLock }

func (r gocuratorRW) read() locker  { return gocuratorMutex{r.rw.Read()} }
func (r gocuratorRW) write() locker { return gocuratorMutex{r.rw.Write()} }

// deleteTree removes root and everything under it (a run on an external
// server leaves nothing behind). Best effort: a lock parent reaped as a
// container meanwhile is fine.
func deleteTree(ctx context.Context, connect, root string, timeout time.Duration) error {
	s, err := gocuratorLib{}.connect(ctx, connect, timeout)
	if err != nil {
		return err
	}
	defer s.close()
	c := s.(gocuratorSession).c
	var del func(p string) error
	del = func(p string) error {
		kids, _, err := c.Children(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := del(p + "/" + k); err != nil {
				return err
			}
		}
		if err := c.Delete(ctx, p); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		return nil
	}
	return del(root)
}

// harnessClient is the harness's own session: it makes the cache
// workloads' trees and is cachelag's writer, the same for every peer.
type harnessClient struct{ c *framework.Client }

func openHarnessClient(ctx context.Context, connect string, timeout time.Duration) (*harnessClient, error) {
	s, err := gocuratorLib{}.connect(ctx, connect, timeout)
	if err != nil {
		return nil, err
	}
	return &harnessClient{s.(gocuratorSession).c}, nil
}

func (h *harnessClient) close() { h.c.Close() }

// createAll creates paths (parents first, data each), in transactions of
// up to 1,000 (a 10,000-node tree in a few round trips), the parents of
// the first made as needed.
func (h *harnessClient) createAll(ctx context.Context, paths []string, data []byte) error {
	if len(paths) == 0 {
		return nil
	}
	if _, err := h.c.Create(ctx, paths[0], data, framework.WithParents()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	for rest := paths[1:]; len(rest) > 0; {
		n := min(len(rest), 1000)
		ops := make([]framework.Op, n)
		for i, p := range rest[:n] {
			ops[i] = framework.CreateOp{Path: p, Data: data}
		}
		if _, err := h.c.Multi(ctx, ops...); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

func (h *harnessClient) set(ctx context.Context, path string, data []byte) error {
	_, err := h.c.Set(ctx, path, data)
	return err
}

// checkChroot fails when connect names a chroot that does not exist:
// ZooKeeper's Java client (the curator peer) cannot create under it,
// while gocurator and go-zookeeper's lock would make it, so a run would
// fail or not depending on which peer came first.
func checkChroot(ctx context.Context, connect string, timeout time.Duration) error {
	hosts, chroot := splitChroot(connect)
	if chroot == "" {
		return nil
	}
	s, err := gocuratorLib{}.connect(ctx, hosts, timeout)
	if err != nil {
		return err
	}
	defer s.close()
	ok, _, err := s.(gocuratorSession).c.Exists(ctx, chroot)
	switch {
	case err != nil:
		return fmt.Errorf("the chroot %s of --connect: %w", chroot, err)
	case !ok:
		return fmt.Errorf("the chroot %s of --connect does not exist on the server: create it first", chroot)
	}
	return nil
}

// harnessRegistry is the harness's registry of the discovery workloads'
// instances, on its own session (discovery.go).
type harnessRegistry struct {
	d *discovery.Discovery[benchPayload]
}

func (h *harnessClient) registry(base string) (*harnessRegistry, error) {
	d, err := discovery.New[benchPayload](h.c, base)
	if err != nil {
		return nil, err
	}
	return &harnessRegistry{d}, nil
}

// register registers a dynamic instance id of the service name (i makes
// its address); it returns once its node is made.
func (r *harnessRegistry) register(ctx context.Context, name, id string, i int) error {
	_, err := r.d.Register(ctx, discovery.Instance[benchPayload]{Name: name, ID: id,
		Address: fmt.Sprintf("10.0.%d.%d", i/250%250, i%250+1), Port: 8080,
		Payload: benchPayload{"zone": fmt.Sprintf("z%d", i%3)}})
	return err
}

func (r *harnessRegistry) unregister(ctx context.Context, id string) error {
	return r.d.Unregister(ctx, id)
}

// close unregisters every instance.
func (r *harnessRegistry) close() { r.d.Close() }

func (s gocuratorSession) queue(path, lockPath string, consume func([]byte)) (benchQueue, error) {
	opts := []rqueue.Option{rqueue.WithOnError(func(err error) { fmt.Fprintln(os.Stderr, "queue:", err) })}
	if lockPath != "" {
		opts = append(opts, rqueue.WithLockPath(lockPath))
	}
	var fn rqueue.Consumer[[]byte]
	if consume != nil {
		fn = func(_ context.Context, item []byte) error { consume(item); return nil }
	}
	q, err := rqueue.New(s.c, path, rqueue.Bytes{}, fn, opts...)
	if err != nil {
		return nil, err
	}
	if err := q.Start(bg); err != nil {
		return nil, err
	}
	return gocuratorQueue{q}, nil
}

type gocuratorQueue struct{ q *rqueue.Queue[[]byte] }

func (q gocuratorQueue) put(ctx context.Context, item []byte) error { return q.q.Put(ctx, item) }
func (q gocuratorQueue) close()                                     { q.q.Close() }
