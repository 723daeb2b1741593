package discovery_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

// A service registers two instances; a client finds them through a
// Provider, round-robin, and reads the registry directly too.
func Example() {
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

	type meta struct {
		Zone string `json:"zone"`
	}
	reg, err := discovery.New[meta](client, "/services")
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close() // unregisters both
	for i, zone := range []string{"eu", "us"} {
		_, err := reg.Register(ctx, discovery.Instance[meta]{Name: "billing", ID: fmt.Sprint("b", i),
			Address: "10.0.0.1", Port: 8080 + i, Payload: meta{zone}})
		if err != nil {
			log.Fatal(err)
		}
	}

	p, err := reg.NewProvider("billing", discovery.WithStrategy(discovery.RoundRobin()))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}
	for range 3 {
		in, _ := p.Instance()
		fmt.Println("call", in.ID, in.Address, in.Port, in.Payload.Zone)
	}
	names, _ := reg.Names(ctx)
	fmt.Println("services:", names)
	// Output:
	// call b0 10.0.0.1 8080 eu
	// call b1 10.0.0.1 8081 us
	// call b0 10.0.0.1 8080 eu
	// services: [billing]
}

// The bytes of an instance are Curator's JsonInstanceSerializer's.
func ExampleInstance_Marshal() {
	spec, _ := discovery.ParseURISpec("{scheme}://{address}:{port}")
	in := discovery.Instance[map[string]string]{Name: "api", ID: "i1", Address: "10.0.0.1", Port: 80,
		Payload: map[string]string{"k": "v"}, PayloadClass: "java.util.HashMap",
		RegistrationTime: time.UnixMilli(1700000000000), URISpec: spec}
	b, _ := in.Marshal(discovery.WithEnabled)
	fmt.Println(string(b))
	fmt.Println(in.URI())
	// Output:
	// {"name":"api","id":"i1","address":"10.0.0.1","port":80,"sslPort":null,"payload":{"@class":"java.util.HashMap","k":"v"},"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]},"enabled":true}
	// http://10.0.0.1:80
}
