package zktest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/testing/zktest"
)

func ExampleNewServer() {
	s, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err) // wraps zktest.ErrNotInstalled when ZooKeeper is missing
	}
	defer s.Close()

	mode, err := s.Mode()
	fmt.Println(mode, err)
	// Output: standalone <nil>
}

// A test that loses its session: connect the client through a Proxy, then
// expire the session with a partition.
func ExampleExpireSession() {
	s, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	p, err := zktest.NewProxy(s.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	// ... connect a client to p.Addr() with a 1 s session timeout and note
	// its session id ...
	var sessionID int64

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := zktest.ExpireSession(ctx, p, s, sessionID); err != nil {
		log.Fatal(err)
	}
	// The client now reconnects and learns that its session has expired.
}

// A create that took effect although the client saw a connection loss:
// hold the reply to the next create, check the node, then drop the reply.
func ExampleProxy_HoldReply() {
	s, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	p, err := zktest.NewProxy(s.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	// ... connect the client under test to p.Addr() ...
	h := p.HoldReply(zktest.OpCreate)
	// ... make the client create a node, on another goroutine ...

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err == nil {
		// The server has created the node; the client is still waiting.
		h.Drop() // it gets a connection loss (h.Release would deliver the reply)
	}
	fmt.Println(p.Requests(zktest.OpCreate), p.WatchRequests(zktest.OpGetChildren2))
}
