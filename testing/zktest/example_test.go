package zktest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

func ExampleNewServer() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err) // wraps zktest.ErrNotInstalled when ZooKeeper is missing
	}
	defer srv.Close()

	mode, err := srv.Mode()
	fmt.Println(mode, err)

	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path, err := client.Create(ctx, "/hello", []byte("world"))
	fmt.Println(path, err)
	// Output:
	// standalone <nil>
	// /hello <nil>
}

// In a test, StartServer starts the server, fails the test (naming the
// install command) if it cannot, and closes the server when the test ends.
// With ZK_CONNECT set, it gives the test a fresh chroot on that ensemble
// instead: a client that reaches the server through a proxy appends
// srv.Chroot() ("" for a local server) to the proxy's address.
//
// This example only compiles: an example has no *testing.T to run it with.
// The test below is how it reads in a _test.go file of your own.
func ExampleStartServer() {
	TestOrderLock := func(t *testing.T) {
		srv := zktest.StartServer(t)           // closed at the end of the test
		px := zktest.StartProxy(t, srv.Addr()) // a fault proxy, closed too
		client, err := framework.New(px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()

		m, err := locks.NewMutex(client, "/locks/orders")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		// The holder's session expires for real: it must be told.
		if err := zktest.ExpireSession(ctx, px, srv, client.Session().ID()); err != nil {
			t.Fatal(err)
		}
		select {
		case <-m.Lost():
		case <-ctx.Done():
			t.Fatal("the holder was not told that its lock was lost")
		}
	}
	_ = TestOrderLock // in a _test.go file: func TestOrderLock(t *testing.T) { ... }
}

// A three-server ensemble: the client rides out the leader's death.
func ExampleNewCluster() {
	cl, err := zktest.NewCluster(3)
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	client, err := framework.New(cl.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	modes := map[string]int{}
	for _, m := range cl.Members() {
		mode, err := m.Mode()
		if err != nil {
			log.Fatal(err)
		}
		modes[mode]++
	}
	fmt.Println("leaders:", modes["leader"], "followers:", modes["follower"])
	if _, err := client.Create(ctx, "/config", []byte("v1")); err != nil {
		log.Fatal(err)
	}

	leader, err := cl.Leader()
	if err != nil {
		log.Fatal(err)
	}
	if err := cl.Members()[leader].Stop(); err != nil { // kill -9 the leader
		log.Fatal(err)
	}
	if err := cl.WaitQuorum(ctx); err != nil { // the other two elect a new one
		log.Fatal(err)
	}
	next, err := cl.Leader()
	fmt.Println("new leader:", err == nil && next != leader)

	data, _, err := client.Get(ctx, "/config") // retried until reconnected
	fmt.Printf("/config = %s %v\n", data, err)
	// Output:
	// leaders: 1 followers: 2
	// new leader: true
	// /config = v1 <nil>
}

// A Proxy between a client and the server injects network faults. Under
// Blackhole nothing gets through, but the sockets stay open: the client
// has not noticed yet (it will, after two thirds of its session timeout);
// Heal delivers what was held. The proxy also counts requests by op code.
func ExampleProxy() {
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
	client, err := framework.New(px.Addr(), framework.WithSessionTimeout(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if _, err := client.Create(ctx, "/config", []byte("v1")); err != nil {
		log.Fatal(err)
	}
	px.ResetCounts()
	_, _, w, err := client.GetW(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	w.Stop()
	fmt.Println("getData requests:", px.Requests(zktest.OpGetData),
		"with a watch:", px.WatchRequests(zktest.OpGetData))

	px.Blackhole()
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	_, _, err = client.Get(short, "/config")
	cancelShort()
	fmt.Println("Get during the partition, DeadlineExceeded:", errors.Is(err, context.DeadlineExceeded))
	fmt.Println("client connected as far as it knows:", client.Connected())

	px.Heal()
	data, _, err := client.Get(ctx, "/config")
	fmt.Printf("Get after Heal: %s %v\n", data, err)
	// Output:
	// getData requests: 1 with a watch: 1
	// Get during the partition, DeadlineExceeded: true
	// client connected as far as it knows: true
	// Get after Heal: v1 <nil>
}

// HoldReply lets a request take effect on the server while its reply is
// held back; Drop then makes the client see a connection loss. Here a
// protected create (as every lock recipe makes its nodes) finds its node
// again instead of creating a second one.
func ExampleProxy_HoldReply() {
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

	if _, err := client.Create(ctx, "/jobs", nil); err != nil {
		log.Fatal(err)
	}
	px.ResetCounts()
	held := px.HoldReply(zktest.OpCreate) // the next create's reply

	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		path, err := client.Create(ctx, "/jobs/job-", []byte("payload"),
			framework.WithProtection(), framework.WithMode(framework.ModeEphemeralSequential))
		done <- result{path, err}
	}()
	if err := held.Wait(ctx); err != nil { // the server has made the node
		log.Fatal(err)
	}
	held.Drop() // the client sees a connection loss
	r := <-done
	fmt.Println("Create:", r.err)

	kids, _, err := client.Children(ctx, "/jobs")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("nodes:", len(kids), "the one returned:", "/jobs/"+kids[0] == r.path)
	fmt.Println("create requests:", px.Requests(zktest.OpCreate))
	// Output:
	// Create: <nil>
	// nodes: 1 the one returned: true
	// create requests: 1
}

// ExpireSession has the server expire a client's session for real, as a
// long network partition would: the client connects through a Proxy,
// which ExpireSession black-holes until the server drops the session.
func ExampleExpireSession() {
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
	client, err := framework.New(px.Addr(), framework.WithSessionTimeout(2*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if _, err := client.Create(ctx, "/workers/w1", nil, framework.WithParents(),
		framework.WithMode(framework.ModeEphemeral)); err != nil {
		log.Fatal(err)
	}
	session := client.Session()
	if err := zktest.ExpireSession(ctx, px, srv, session.ID()); err != nil {
		log.Fatal(err)
	}
	select {
	case <-session.Done():
		fmt.Println("session lost, ErrSessionLost:", errors.Is(session.Err(), curator.ErrSessionLost))
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	if err := client.BlockUntilConnected(ctx); err != nil { // in a new session
		log.Fatal(err)
	}
	fmt.Println("new session:", client.Session().ID() != session.ID())
	ok, _, err := client.Exists(ctx, "/workers/w1")
	fmt.Println("ephemeral node exists:", ok, err)
	// Output:
	// session lost, ErrSessionLost: true
	// new session: true
	// ephemeral node exists: false <nil>
}

// A Fence stands in for a resource guarded by a lock: it lets in only
// fencing tokens higher than any it has seen, and records a violation when
// a holder that was never told of a loss brings a stale one.
func ExampleFence() {
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
	fence := zktest.NewFence()

	a, err := locks.NewMutex(client, "/locks/store")
	if err != nil {
		log.Fatal(err)
	}
	b, err := locks.NewMutex(client, "/locks/store")
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	tokenA, err := a.FencingToken(ctx)
	if err != nil {
		log.Fatal(err)
	}
	exit, ok := fence.Enter("a", tokenA, a.Lost())
	fmt.Println("a enters:", ok)
	exit()
	if err := a.Unlock(ctx); err != nil {
		log.Fatal(err)
	}

	if err := b.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	tokenB, err := b.FencingToken(ctx)
	if err != nil {
		log.Fatal(err)
	}
	exit, ok = fence.Enter("b", tokenB, b.Lost())
	fmt.Println("b enters:", ok)

	// a comes back late with its old token: refused. a no longer holds
	// (its Lost is closed), so that is the fence doing its job.
	_, ok = fence.Enter("a", tokenA, a.Lost())
	fmt.Println("a enters again:", ok, "violations:", len(fence.Violations()))
	// A holder that believes it still holds, with a stale token: a bug.
	_, ok = fence.Enter("c", tokenA, make(chan struct{}))
	fmt.Println("c enters:", ok, "violations:", len(fence.Violations()))
	exit()
	if err := b.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("entries:", fence.Entries(), "stale:", fence.Stale())
	// Output:
	// a enters: true
	// b enters: true
	// a enters again: false violations: 0
	// c enters: false violations: 1
	// entries: 2 stale: 2
}

// A server that caps sessions, as production ensembles often do: a client
// asking for 30 s gets the server's maximum.
func ExampleWithSessionTimeouts() {
	srv, err := zktest.NewServer(zktest.WithSessionTimeouts(time.Second, 5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	granted, err := srv.SessionTimeoutFor(30 * time.Second)
	fmt.Println("the server grants:", granted, err)

	client, err := framework.New(srv.ConnectString(), framework.WithSessionTimeout(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.BlockUntilConnected(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("asked:", client.SessionTimeout(), "granted:", client.Session().Timeout())
	// Output:
	// the server grants: 5s <nil>
	// asked: 30s granted: 5s
}

// WatchCount counts the watches the server holds: a test can prove that
// code leaves none behind.
func ExampleServer_WatchCount() {
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

	if _, err := client.Create(ctx, "/config", nil); err != nil {
		log.Fatal(err)
	}
	_, _, w, err := client.GetW(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	defer w.Stop()
	n, err := srv.WatchCount()
	fmt.Println("watches:", n, err)

	if _, err := client.Set(ctx, "/config", []byte("v2")); err != nil { // fires it
		log.Fatal(err)
	}
	select {
	case <-w.C():
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	n, err = srv.WatchCount()
	fmt.Println("watches:", n, err)
	// Output:
	// watches: 1 <nil>
	// watches: 0 <nil>
}

// A benchmark runs against a server started as users run theirs: the
// JVM's default compilers and collector, its heap reserved at start. (The
// defaults favor a quick start, for tests.) Its JIT compiles the hot code
// in the first seconds of load: warm it up before timing anything.
func ExampleWithProductionJVM() {
	srv, err := zktest.NewServer(zktest.WithProductionJVM(), zktest.WithHeap(512))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	mode, err := srv.Mode()
	fmt.Println(mode, err)
	// Output: standalone <nil>
}
