package grpc_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/gocurator/curator/discovery"
	zkgrpc "github.com/gocurator/curator/discovery/grpc"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

// A server registers itself under /services/health; a client dials
// "zk:///health" and reaches it through the registry.
func ExampleNewBuilder() {
	zkSrv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer zkSrv.Close()
	client, err := framework.New(zkSrv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The server side: serve, then register.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(ln)
	defer srv.Stop()
	reg, err := discovery.New[any](client, "/services")
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	_, err = reg.Register(ctx, discovery.Instance[any]{Name: "health", Address: "127.0.0.1",
		Port: ln.Addr().(*net.TCPAddr).Port})
	if err != nil {
		log.Fatal(err)
	}

	// The client side: a resolver on the registry.
	b, err := zkgrpc.NewBuilder[any](client, "/services")
	if err != nil {
		log.Fatal(err)
	}
	conn, err := grpc.NewClient("zk:///health", grpc.WithResolvers(b),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetStatus())
	// Output: SERVING
}
