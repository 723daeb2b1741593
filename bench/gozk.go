package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// gozk is go-zookeeper's own lock, zk.NewLock: the bare recipe (no
// context, no retries, no loss detection) that gocurator is built on. It
// has no semaphore and no read-write lock.
type gozkLib struct{}

func (gozkLib) impl() string {
	return "go-zookeeper " + moduleVersion("github.com/go-zookeeper/zk") + " zk.Lock"
}

// connect: go-zookeeper takes no chroot, so a connect string's chroot
// ("h1:p1,h2:p2/chroot") is cut off and put in front of every path.
func (gozkLib) connect(ctx context.Context, connect string, timeout time.Duration) (session, error) {
	hosts, chroot := splitChroot(connect)
	c, events, err := zk.Connect(strings.Split(hosts, ","), timeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		return nil, err
	}
	for {
		select {
		case e := <-events:
			if e.State == zk.StateHasSession {
				go drain(events)
				return gozkSession{c, chroot}, nil
			}
		case <-ctx.Done():
			c.Close()
			return nil, fmt.Errorf("no session with %s: %w", connect, ctx.Err())
		}
	}
}

// drain keeps the session's event channel moving (go-zookeeper drops
// events when it is full, but a reader costs nothing).
func drain(events <-chan zk.Event) {
	for range events {
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

type gozkSession struct {
	c      *zk.Conn
	chroot string // "" or "/a/b", in front of every path
}

func (s gozkSession) close() { s.c.Close() }

func (s gozkSession) mutex(path string) (locker, error) {
	return gozkLock{zk.NewLock(s.c, s.chroot+path, zk.WorldACL(zk.PermAll))}, nil
}

func (gozkSession) semaphore(string, int) (leaser, error) { return nil, errNoRecipe }
func (gozkSession) rwlock(string) (rwLocker, error)       { return nil, errNoRecipe }

func (s gozkSession) children(_ context.Context, path string) (int, error) {
	kids, _, err := s.c.Children(s.chroot + path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	return len(kids), err
}

// gozkLock: zk.Lock takes no context; a Lock that never returns is caught
// by the stall guard.
type gozkLock struct{ l *zk.Lock }

func (l gozkLock) lock(context.Context) error   { return l.l.Lock() }
func (l gozkLock) unlock(context.Context) error { return l.l.Unlock() }

// splitChroot cuts a connect string into its hosts and its chroot ("" or
// "/a/b", without a trailing slash).
func splitChroot(connect string) (hosts, chroot string) {
	hosts, chroot, ok := strings.Cut(connect, "/")
	if !ok {
		return hosts, ""
	}
	return hosts, strings.TrimSuffix("/"+chroot, "/")
}

// moduleVersion is the version of a module linked into this binary.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(version unknown)"
}
