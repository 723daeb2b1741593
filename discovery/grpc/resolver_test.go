package grpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/discovery"
	zkgrpc "github.com/gocurator/curator/discovery/grpc"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backend is a gRPC server on loopback (the health service answers).
type backend struct {
	srv  *grpc.Server
	addr string
	port int
}

func startBackend(t *testing.T) *backend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	return &backend{srv: s, addr: ln.Addr().String(), port: ln.Addr().(*net.TCPAddr).Port}
}

func connect(t *testing.T, srv *zktest.Server) *framework.Client {
	t.Helper()
	c, err := framework.New(srv.ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// curatorJSON is a DYNAMIC instance as Curator 5.4's JsonInstanceSerializer
// (payload a HashMap, with "enabled") writes it: what a Java service
// registers (the root module's interop tests prove Java writes these bytes).
func curatorJSON(id string, port int) string {
	return `{"name":"echo","id":"` + id + `","address":"127.0.0.1","port":` + strconv.Itoa(port) +
		`,"sslPort":null,"payload":{"@class":"java.util.HashMap","lang":"java"},"registrationTimeUTC":1700000000000,` +
		`"serviceType":"DYNAMIC","uriSpec":null,"enabled":true}`
}

// Two Go servers and one Java-registered instance: a gRPC client balances
// round-robin across the three; an instance that leaves (unregistered,
// then stopped) costs no failed call; one that comes back is used again.
func TestRoundRobinAcrossGoAndJava(t *testing.T) {
	srv := zktest.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := connect(t, srv)
	d, err := discovery.New[map[string]string](reg, "/services")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	backends := []*backend{startBackend(t), startBackend(t), startBackend(t)}
	for i, b := range backends[:2] {
		if _, err := d.Register(ctx, discovery.Instance[map[string]string]{Name: "echo", ID: fmt.Sprint("go", i),
			Address: "127.0.0.1", Port: b.port}); err != nil {
			t.Fatal(err)
		}
	}
	java := connect(t, srv) // the "Java service": its node, its bytes
	if _, err := java.Create(ctx, "/services/echo/java0", []byte(curatorJSON("java0", backends[2].port)),
		framework.WithMode(framework.ModeEphemeral)); err != nil {
		t.Fatal(err)
	}

	b, err := zkgrpc.NewBuilder[map[string]string](connect(t, srv), "/services")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("zk:///echo", grpc.WithResolvers(b),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	call := func() (string, error) {
		var p peer.Peer
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p), grpc.WaitForReady(true))
		if err != nil {
			return "", err
		}
		return p.Addr.String(), nil
	}
	served := func(n int) map[string]int {
		seen := map[string]int{}
		for range n {
			addr, err := call()
			if err != nil {
				t.Fatal(err)
			}
			seen[addr]++
		}
		return seen
	}
	waitFor(t, "all three backends in use", func() bool { return len(served(6)) == 3 })
	if seen := served(30); len(seen) != 3 || seen[backends[0].addr] != 10 || seen[backends[2].addr] != 10 {
		t.Errorf("round robin over 3: %v", seen)
	}

	// Calls keep going while go1 leaves: unregistered first, stopped
	// once no call can reach it any more (the client saw it leave).
	var failed atomic.Int64
	var calls atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := call(); err != nil {
				failed.Add(1)
			}
			calls.Add(1)
		}
	}()
	if err := d.Unregister(ctx, "go1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "go1 out of rotation", func() bool { return served(20)[backends[1].addr] == 0 })
	backends[1].srv.GracefulStop()
	before := calls.Load()
	waitFor(t, "more calls after the stop", func() bool { return calls.Load() > before+50 })
	close(stop)
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d of %d calls failed while an instance left", n, calls.Load())
	}

	// The Java instance goes with its session; a Go instance comes back.
	java.Close()
	waitFor(t, "only go0 left", func() bool { s := served(10); return len(s) == 1 && s[backends[0].addr] == 10 })
	nb := startBackend(t)
	if _, err := d.Register(ctx, discovery.Instance[map[string]string]{Name: "echo", ID: "go2", Address: "127.0.0.1", Port: nb.port}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "go2 in rotation", func() bool { return served(10)[nb.addr] > 0 })
}

// A disabled instance, one with no port and one whose bytes are no
// instance are never dialed.
func TestSkipsUnusableInstances(t *testing.T) {
	srv := zktest.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := connect(t, srv)
	d, err := discovery.New[any](c, "/s")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	good, off := startBackend(t), startBackend(t)
	for _, in := range []discovery.Instance[any]{
		{Name: "x", ID: "good", Address: "127.0.0.1", Port: good.port},
		{Name: "x", ID: "off", Address: "127.0.0.1", Port: off.port, Disabled: true},
		{Name: "x", ID: "noport", Address: "127.0.0.1"},
	} {
		if _, err := d.Register(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create(ctx, "/s/x/junk", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	b, err := zkgrpc.NewBuilder[any](c, "/s", zkgrpc.WithScheme("disc"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("disc:///x", grpc.WithResolvers(b), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for range 20 {
		var p peer.Peer
		if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p), grpc.WaitForReady(true)); err != nil {
			t.Fatal(err)
		}
		if p.Addr.String() != good.addr {
			t.Fatalf("dialed %s, want only %s", p.Addr, good.addr)
		}
	}
}

func TestBadInput(t *testing.T) {
	srv := zktest.StartServer(t)
	c := connect(t, srv)
	for name, f := range map[string]func() error{
		"nil client":  func() error { _, err := zkgrpc.NewBuilder[any](nil, "/s"); return err },
		"bad base":    func() error { _, err := zkgrpc.NewBuilder[any](c, "s"); return err },
		"upper case":  func() error { _, err := zkgrpc.NewBuilder[any](c, "/s", zkgrpc.WithScheme("ZK")); return err },
		"nil option":  func() error { _, err := zkgrpc.NewBuilder[any](c, "/s", nil); return err },
		"bad service": func() error { return dialBad(c) },
	} {
		if err := f(); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}

// dialBad dials a target whose service name is no path component: Build
// fails, and so does the first call.
func dialBad(c *framework.Client) error {
	b, err := zkgrpc.NewBuilder[any](c, "/s")
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient("zk:///a/b", grpc.WithResolvers(b), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err == nil {
		return errors.New("a call through a bad target succeeded")
	}
	_, err = b.Build(resolverTarget("zk:///a/b"), nil, resolverBuildOptions())
	return err
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen in a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
