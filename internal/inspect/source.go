package inspect

import (
	"context"

	"github.com/gocurator/curator/framework"
)

// Source is what reading a tree needs: a framework.Client (through
// FromClient), or a fake in tests.
type Source interface {
	Get(ctx context.Context, path string) ([]byte, *framework.Stat, error)
	Children(ctx context.Context, path string) ([]string, *framework.Stat, error)
}

// WatchSource is a Source that can also set watches (for Watch).
type WatchSource interface {
	Source
	ChildrenW(ctx context.Context, path string) ([]string, *framework.Stat, Watcher, error)
	ExistsW(ctx context.Context, path string) (bool, *framework.Stat, Watcher, error)
	BlockUntilConnected(ctx context.Context) error
}

// Watcher is one watch: one event, then spent (framework.Watch).
type Watcher interface {
	C() <-chan framework.Event
	Stop()
}

// FromClient adapts a framework client.
func FromClient(c *framework.Client) WatchSource { return client{c} }

type client struct{ c *framework.Client }

func (c client) Get(ctx context.Context, p string) ([]byte, *framework.Stat, error) {
	return c.c.Get(ctx, p)
}

func (c client) Children(ctx context.Context, p string) ([]string, *framework.Stat, error) {
	return c.c.Children(ctx, p)
}

func (c client) ChildrenW(ctx context.Context, p string) ([]string, *framework.Stat, Watcher, error) {
	names, st, w, err := c.c.ChildrenW(ctx, p)
	if err != nil {
		return nil, nil, nil, err
	}
	return names, st, w, nil
}

func (c client) ExistsW(ctx context.Context, p string) (bool, *framework.Stat, Watcher, error) {
	ok, st, w, err := c.c.ExistsW(ctx, p)
	if err != nil {
		return false, nil, nil, err
	}
	return ok, st, w, nil
}

func (c client) BlockUntilConnected(ctx context.Context) error { return c.c.BlockUntilConnected(ctx) }
