package cache_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/testing/zktest"
)

// A config watcher: the cache holds /config and everything under it, and
// tells of each change.
func ExampleCache() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.Create(ctx, "/config/timeout", []byte("5s"), framework.WithParents()); err != nil {
		log.Fatal(err)
	}

	c, err := cache.New(client, "/config")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	events := c.Events()
	if err := c.Start(ctx); err != nil { // returns once loaded
		log.Fatal(err)
	}
	n, _ := c.Get("/config/timeout")
	fmt.Printf("timeout is %s\n", n.Data)

	if _, err := client.Set(ctx, "/config/timeout", []byte("10s")); err != nil {
		log.Fatal(err)
	}
	// Events tell the consumer how the cache moved since it last looked:
	// created 5s, initialized, changed 5s -> 10s; or, if it looked only
	// after the change, created 10s (a slow consumer's changes coalesce,
	// the last state is never skipped).
	for ev := range events {
		if ev.New != nil && string(ev.New.Data) == "10s" {
			fmt.Printf("%s is now %s\n", ev.Path, ev.New.Data)
			return
		}
	}
	// Output:
	// timeout is 5s
	// /config/timeout is now 10s
}

// WithOneShotWatches keeps TreeCache's standard watches (a data watch per
// node, a child watch per parent) instead of one persistent recursive
// watch: for servers before ZooKeeper 3.6 the cache falls back to it by
// itself. WithMaxDepth(0) caches the root alone (NodeCache).
func ExampleWithOneShotWatches() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.Create(ctx, "/flags/beta", []byte("on"), framework.WithParents()); err != nil {
		log.Fatal(err)
	}
	c, err := cache.New(client, "/flags", cache.WithOneShotWatches(), cache.WithMaxDepth(1))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	n, ok := c.Get("/flags/beta")
	fmt.Println(string(n.Data), ok)
	// Output:
	// on true
}
