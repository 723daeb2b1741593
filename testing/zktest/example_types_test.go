package zktest_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

// A HeldReply lets a test see the world between the server's doing a
// request and the client's hearing of it: here another client already
// reads the new value while the writer's Set still waits. Release
// delivers the reply late (Drop would lose it: see Proxy.HoldReply).
func ExampleHeldReply_Release() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	px, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()
	writer, err := framework.New(px.Addr()) // through the proxy
	if err != nil {
		log.Fatal(err)
	}
	defer writer.Close()
	reader, err := framework.New(srv.ConnectString()) // straight to the server
	if err != nil {
		log.Fatal(err)
	}
	defer reader.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if _, err := writer.Create(ctx, "/config", []byte("v1")); err != nil {
		log.Fatal(err)
	}
	held := px.HoldReply(zktest.OpSetData) // the next setData's reply
	done := make(chan error, 1)
	go func() {
		_, err := writer.Set(ctx, "/config", []byte("v2"))
		done <- err
	}()
	if err := held.Wait(ctx); err != nil { // the server has done the Set
		log.Fatal(err)
	}
	data, _, err := reader.Get(ctx, "/config")
	fmt.Printf("reader sees: %s %v\n", data, err)
	select {
	case err := <-done:
		log.Fatal("Set returned before its reply was released: ", err)
	default:
		fmt.Println("writer's Set: still waiting for its reply")
	}
	held.Release()
	fmt.Println("writer's Set:", <-done)
	// Output:
	// reader sees: v2 <nil>
	// writer's Set: still waiting for its reply
	// writer's Set: <nil>
}

// An Op is a request's op code as the Proxy counts it. The framework's
// Children is getChildren2 on the wire, not getChildren.
func ExampleOp() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	px, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()
	client, err := framework.New(px.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.BlockUntilConnected(ctx); err != nil {
		log.Fatal(err)
	}

	px.ResetCounts()
	if _, err := client.Create(ctx, "/jobs", nil); err != nil {
		log.Fatal(err)
	}
	if _, _, err := client.Get(ctx, "/jobs"); err != nil {
		log.Fatal(err)
	}
	if _, _, err := client.Children(ctx, "/jobs"); err != nil {
		log.Fatal(err)
	}
	for _, op := range []zktest.Op{zktest.OpCreate, zktest.OpGetData, zktest.OpGetChildren, zktest.OpGetChildren2} {
		fmt.Printf("%s (%d): %d\n", op, op, px.Requests(op))
	}
	// Output:
	// create (1): 1
	// getData (4): 1
	// getChildren (8): 0
	// getChildren2 (12): 1
}

// A *Server and a *Cluster are SessionListers: they list the sessions
// connected to them (the cons four-letter word), as ExpireSession needs.
func ExampleSessionLister() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.BlockUntilConnected(ctx); err != nil {
		log.Fatal(err)
	}

	var lister zktest.SessionLister = srv
	connected := func(id int64) bool {
		ids, err := lister.Sessions()
		if err != nil {
			log.Fatal(err)
		}
		return slices.Contains(ids, id)
	}
	id := client.Session().ID()
	fmt.Println("listed while connected:", connected(id))

	if err := client.Close(); err != nil { // ends the session
		log.Fatal(err)
	}
	for connected(id) { // the server drops the connection a moment later
		select {
		case <-time.After(25 * time.Millisecond):
		case <-ctx.Done():
			log.Fatal(ctx.Err())
		}
	}
	fmt.Println("listed once closed:", connected(id))
	// Output:
	// listed while connected: true
	// listed once closed: false
}
