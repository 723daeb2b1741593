package framework_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

// A persistent recursive watch (Curator's PersistentWatcher) tells of
// every change under a path until Stop, which removes it from the server.
func ExampleClient_AddWatch() {
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

	events := make(chan framework.Event, 16)
	w, err := client.AddWatch(ctx, "/config", true, func(ev framework.Event) { events <- ev })
	if err != nil {
		log.Fatal(err) // curator.ErrUnimplemented before ZooKeeper 3.6
	}
	if _, err := client.Create(ctx, "/config/db/url", []byte("pg://a"), framework.WithParents()); err != nil {
		log.Fatal(err)
	}
	if _, err := client.Set(ctx, "/config/db/url", []byte("pg://b")); err != nil {
		log.Fatal(err)
	}
	for range 4 { // /config, /config/db, /config/db/url created; url changed
		ev := <-events
		fmt.Println(ev.Type, ev.Path)
	}
	if err := w.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// NodeCreated /config
	// NodeCreated /config/db
	// NodeCreated /config/db/url
	// NodeDataChanged /config/db/url
}

// GetMany reads several nodes in one request (ZooKeeper's multiRead),
// each with its own outcome.
func ExampleClient_GetMany() {
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
	for _, p := range []string{"/a", "/b"} {
		if _, err := client.Create(ctx, p, []byte(p+" data")); err != nil {
			log.Fatal(err)
		}
	}
	res, err := client.GetMany(ctx, []string{"/a", "/missing", "/b"})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res {
		if errors.Is(r.Err, zk.ErrNoNode) {
			fmt.Println("no node")
			continue
		}
		fmt.Printf("%s (version %d)\n", r.Data, r.Stat.Version)
	}
	// Output:
	// /a data (version 0)
	// no node
	// /b data (version 0)
}
