package locks_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// The read half (Curator's readLock()): readers of different processes
// hold it at once, each with a node of its own in the shared queue.
func ExampleReadLock() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c1, err := framework.New(srv.ConnectString()) // process 1
	if err != nil {
		log.Fatal(err)
	}
	defer c1.Close()
	c2, err := framework.New(srv.ConnectString()) // process 2
	if err != nil {
		log.Fatal(err)
	}
	defer c2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rw1, err := locks.NewReadWriteLock(c1, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}
	rw2, err := locks.NewReadWriteLock(c2, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}

	err = rw1.Read().Do(ctx, func(ctx context.Context) error {
		// ... read the catalog; ctx ends if the read lock is lost ...
		return rw2.Read().Do(ctx, func(context.Context) error {
			parts, err := rw2.Read().Participants(ctx)
			if err != nil {
				return err
			}
			fmt.Println("readers holding at once:", len(parts))
			return nil
		})
	})
	fmt.Println("Do:", err)
	fmt.Println("held:", rw1.Read().IsAcquiredInThisProcess(), rw2.Read().IsAcquiredInThisProcess())
	// Output:
	// readers holding at once: 2
	// Do: <nil>
	// held: false false
}

// The write half (Curator's writeLock()) excludes readers and other
// writers, and has the holding's tools of a Mutex: the held context, a
// fencing token, guarded writes.
func ExampleWriteLock() {
	srv, err := zktest.NewServer()
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

	if _, err := client.Create(ctx, "/catalog/version", []byte("1"), framework.WithParents()); err != nil {
		log.Fatal(err)
	}
	writer, err := locks.NewReadWriteLock(client, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}
	reader, err := locks.NewReadWriteLock(client, "/locks/catalog")
	if err != nil {
		log.Fatal(err)
	}

	err = writer.Write().Do(ctx, func(ctx context.Context) error {
		token, err := writer.Write().FencingToken(ctx)
		if err != nil {
			return err
		}
		fmt.Println("fencing token > 0:", token > 0)
		err = reader.Read().TryLock(ctx)
		fmt.Println("reader while written, ErrLocked:", errors.Is(err, curator.ErrLocked))
		_, err = writer.Write().GuardedMulti(ctx, framework.SetDataOp{Path: "/catalog/version", Data: []byte("2"), Version: -1})
		return err // written only while the write lock is held
	})
	fmt.Println("Do:", err)
	fmt.Println("reader after the writer:", reader.Read().TryLock(ctx))
	if err := reader.Read().Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	data, _, err := client.Get(ctx, "/catalog/version")
	fmt.Printf("version = %s %v\n", data, err)
	// Output:
	// fencing token > 0: true
	// reader while written, ErrLocked: true
	// Do: <nil>
	// reader after the writer: <nil>
	// version = 2 <nil>
}
