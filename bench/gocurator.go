package main

// Every use of gocurator's API in the benchmark is in this file (and the
// server in server.go), so that API changes touch nothing else.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/recipes/locks"
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
