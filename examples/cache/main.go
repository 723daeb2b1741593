// Command cache shows cache.Cache (Curator's CuratorCache; here a
// PathChildrenCache, WithMaxDepth(1)) as a live config watcher: a service
// keeps its configuration in ZooKeeper, one node per key under
// /examples/config, and sees every change as it happens, without reading
// ZooKeeper again to look a key up. An operator, with a session of its own,
// changes the config meanwhile: sets a key, adds one, removes one, then
// rolls the release out in three quick steps; the watcher may be told of
// those as one change (a slow consumer's changes coalesce to the latest
// state, never past it) and ends once it sees the last.
//
//	go run ./examples/cache     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/testing/zktest"
)

func main() { zkenv.Main(run) }

const root = "/examples/config"

func run(ctx context.Context, srv *zktest.Server) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	service, err := framework.New(srv.ConnectString())
	if err != nil {
		return err
	}
	defer service.Close()
	operator, err := framework.New(srv.ConnectString())
	if err != nil {
		return err
	}
	defer operator.Close()

	// The config as it stands when the service starts.
	for key, value := range map[string]string{"db.url": "postgres://db-1/app", "release": "v1", "timeout": "5s"} {
		if _, err := operator.Create(ctx, root+"/"+key, []byte(value), framework.WithParents()); err != nil {
			return err
		}
	}

	// The service's watcher: the config node and its children.
	config, err := cache.New(service, root, cache.WithMaxDepth(1))
	if err != nil {
		return err
	}
	defer config.Close()
	events := config.Events() // before Start: every event, the initial load's too
	started := make(chan error, 1)
	go func() { started <- config.Start(ctx) }()

	operatorDone := make(chan error, 1)
	for {
		select {
		case ev := <-events:
			key := framework.NodeName(ev.Path)
			switch ev.Type {
			case cache.EventCreated:
				if ev.Path != root {
					fmt.Printf("  %s = %s\n", key, ev.New.Data)
				}
			case cache.EventChanged:
				if ev.Path != root {
					fmt.Printf("  %s = %s (was %s)\n", key, ev.New.Data, ev.Old.Data)
				}
			case cache.EventDeleted:
				fmt.Printf("  %s removed (was %s)\n", key, ev.Old.Data)
			case cache.EventInitialized:
				fmt.Printf("config loaded: %d keys; the operator changes it now\n", len(current(config)))
				go func() { operatorDone <- operate(ctx, operator) }()
			case cache.EventRebuilt:
				fmt.Println("session lost: the config was read again (the changes above are what it missed)")
			}
			if ev.New != nil && ev.Path == root+"/release" && string(ev.New.Data) == "v4" {
				if err := <-operatorDone; err != nil {
					return err
				}
				fmt.Println("release v4 seen; the config now:")
				now := current(config)
				for _, key := range slices.Sorted(maps.Keys(now)) {
					fmt.Printf("  %s = %s\n", key, now[key])
				}
				// A lookup is a read of memory, not of ZooKeeper.
				if _, ok := config.Get(root + "/timeout"); !ok {
					fmt.Println("timeout is unset: the service uses its default")
				}
				return nil
			}
		case err := <-started:
			if err != nil {
				return err
			}
			started = nil // done: Initialized came (or comes) on events
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// current is the config as the cache holds it: key -> value.
func current(c *cache.Cache) map[string]string {
	out := map[string]string{}
	for path, n := range c.Snapshot() {
		if path != root {
			out[framework.NodeName(path)] = string(n.Data)
		}
	}
	return out
}

// operate changes the config as an operator would.
func operate(ctx context.Context, c *framework.Client) error {
	if _, err := c.Set(ctx, root+"/db.url", []byte("postgres://db-2/app")); err != nil {
		return err
	}
	if _, err := c.Create(ctx, root+"/feature.search", []byte("on")); err != nil {
		return err
	}
	if err := c.Delete(ctx, root+"/timeout"); err != nil {
		return err
	}
	for _, release := range []string{"v2", "v3", "v4"} { // quick steps: may be told as one
		if _, err := c.Set(ctx, root+"/release", []byte(release)); err != nil {
			return err
		}
	}
	return nil
}
