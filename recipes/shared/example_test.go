package shared_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/shared"
	"github.com/gocurator/curator/testing/zktest"
)

// A Value is bytes in one node, watched: a write by one process is seen
// by the others, whose listeners are told.
func ExampleValue() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c1, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer c1.Close()
	c2, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer c2.Close()

	writer, err := shared.NewValue(c1, "/config/mode", []byte("normal")) // "normal" if new
	if err != nil {
		log.Fatal(err)
	}
	if err := writer.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer writer.Close()
	reader, err := shared.NewValue(c2, "/config/mode", []byte("normal"))
	if err != nil {
		log.Fatal(err)
	}
	heard := make(chan string, 1)
	reader.AddListener(func(v shared.VersionedValue[[]byte]) { heard <- string(v.Value) })
	if err := reader.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer reader.Close()
	fmt.Printf("reader: %s\n", reader.Value())

	if err := writer.SetValue(ctx, []byte("maintenance")); err != nil {
		log.Fatal(err)
	}
	select {
	case v := <-heard:
		fmt.Println("reader's listener:", v)
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	// Output:
	// reader: normal
	// reader's listener: maintenance
}

// A Count is an int in one node, watched: every client sees changes,
// and Changed says when.
func ExampleCount() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c1, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer c1.Close()
	c2, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer c2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	admin, err := shared.NewCount(c1, "/config/max-workers", 3) // 3 if new
	if err != nil {
		log.Fatal(err)
	}
	if err := admin.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer admin.Close()
	reader, err := shared.NewCount(c2, "/config/max-workers", 3)
	if err != nil {
		log.Fatal(err)
	}
	if err := reader.Start(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("count:", admin.Count(), reader.Count())

	changed := reader.Changed() // closed at the next change
	stale := admin.VersionedValue()
	if err := admin.SetCount(ctx, 5); err != nil {
		log.Fatal(err)
	}
	select {
	case <-changed:
		fmt.Println("reader sees:", reader.Count())
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}

	// TrySetCount writes only over the version it read.
	ok, err := reader.TrySetCount(ctx, stale, 4)
	fmt.Println("set 4 over a stale value:", ok, err)
	ok, err = reader.TrySetCount(ctx, reader.VersionedValue(), 4)
	fmt.Println("set 4 over the current value:", ok, err)

	// Close stops the watching goroutine; a closed count cannot start again.
	fmt.Println("Close:", reader.Close())
	fmt.Println("Start after Close, ErrClosed:", errors.Is(reader.Start(ctx), curator.ErrClosed))
	// Output:
	// count: 3 3
	// reader sees: 5
	// set 4 over a stale value: false <nil>
	// set 4 over the current value: true <nil>
	// Close: <nil>
	// Start after Close, ErrClosed: true
}

// A VersionedValue is a value with the version it was read at: TrySetCount
// writes over that version only, so a read-modify-write loop never loses
// an update. Here two processes each add 1 five times, at once.
func ExampleVersionedValue() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	increment := func(sc *shared.Count) {
		for {
			changed := sc.Changed() // before the read: no change goes unseen
			v := sc.VersionedValue()
			ok, err := sc.TrySetCount(ctx, v, v.Value+1)
			if err != nil {
				log.Fatal(err)
			}
			if ok {
				return
			}
			select { // someone wrote first: wait until the watch has read it
			case <-changed:
			case <-ctx.Done():
				log.Fatal(ctx.Err())
			}
		}
	}

	var wg sync.WaitGroup
	for range 2 { // two processes
		client, err := framework.New(srv.ConnectString())
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		sc, err := shared.NewCount(client, "/counters/jobs", 0)
		if err != nil {
			log.Fatal(err)
		}
		if err := sc.Start(ctx); err != nil {
			log.Fatal(err)
		}
		defer sc.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				increment(sc)
			}
		}()
	}
	wg.Wait()

	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	total, err := shared.NewCount(client, "/counters/jobs", 0)
	if err != nil {
		log.Fatal(err)
	}
	if err := total.Start(ctx); err != nil { // reads the node as it is now
		log.Fatal(err)
	}
	defer total.Close()
	v := total.VersionedValue()
	fmt.Println("count:", v.Value, "version:", v.Version)
	// Output:
	// count: 10 version: 10
}
