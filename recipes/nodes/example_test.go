package nodes_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/nodes"
	"github.com/gocurator/curator/testing/zktest"
)

// A member's node under a group path stays while the member lives: made
// again when someone deletes it, with the latest data, and deleted on
// Close.
func ExamplePersistentNode() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
	group := "/services/workers"

	member, err := nodes.NewPersistentNode(client, group+"/worker-1", []byte("10.0.0.1:8080"))
	if err != nil {
		log.Fatal(err)
	}
	if err := member.Start(); err != nil {
		log.Fatal(err)
	}
	if err := member.WaitForInitialCreate(ctx); err != nil {
		log.Fatal(err)
	}
	if err := member.SetData(ctx, []byte("10.0.0.1:9090")); err != nil {
		log.Fatal(err)
	}
	if err := client.Delete(ctx, member.Path()); err != nil { // an operator's mistake
		log.Fatal(err)
	}
	for {
		data, _, err := client.Get(ctx, member.Path())
		if err == nil {
			fmt.Printf("%s is back: %s\n", framework.NodeName(member.Path()), data)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := member.Close(); err != nil {
		log.Fatal(err)
	}
	ok, _, _ := client.Exists(ctx, member.Path())
	fmt.Println("after Close, there:", ok)
	// Output:
	// worker-1 is back: 10.0.0.1:9090
	// after Close, there: false
}
