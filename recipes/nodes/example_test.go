package nodes_test

import (
	"context"
	"fmt"
	"log"
	"sort"
	"strings"
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
	made := make(chan string, 4)
	member.AddListener(func(path string) { made <- path }) // each time it is made
	if err := member.Start(); err != nil {
		log.Fatal(err)
	}
	if err := member.WaitForInitialCreate(ctx); err != nil {
		log.Fatal(err)
	}
	<-made
	if err := member.SetData(ctx, []byte("10.0.0.1:9090")); err != nil {
		log.Fatal(err)
	}
	if err := client.Delete(ctx, member.Path()); err != nil { // an operator's mistake
		log.Fatal(err)
	}
	path := <-made
	data, _, err := client.Get(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s is back: %s\n", framework.NodeName(path), data)
	if err := member.Close(); err != nil {
		log.Fatal(err)
	}
	ok, _, _ := client.Exists(ctx, member.Path())
	fmt.Println("after Close, there:", ok)
	// Output:
	// worker-1 is back: 10.0.0.1:9090
	// after Close, there: false
}

// A service registers itself with a node that outlives no owner: touched
// while the service runs, it goes by itself once the service stops,
// crashed or closed.
func ExamplePersistentTTLNode() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A real ZooKeeper for the example; TTL nodes need
	// zookeeper.extendedTypesEnabled=true (zktest sets it), and the server
	// looks for expired nodes every znode.container.checkIntervalMs.
	srv, err := zktest.NewServer(zktest.WithJVMProperty("znode.container.checkIntervalMs", "100"))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	n, err := nodes.NewPersistentTTLNode(client, "/registry/worker-1", time.Second, []byte("10.0.0.1:8080"))
	if err != nil {
		log.Fatal(err)
	}
	if err := n.Start(); err != nil {
		log.Fatal(err)
	}
	if err := n.WaitForInitialCreate(ctx); err != nil {
		log.Fatal(err) // nodes.ErrTTLUnsupported: the server needs extended types
	}
	for ok := false; !ok; time.Sleep(10 * time.Millisecond) {
		ok, _, _ = client.Exists(ctx, n.ChildPath()) // touched at once
	}
	fmt.Println("registered, and touched")
	if err := n.Close(); err != nil { // stops touching; deletes nothing
		log.Fatal(err)
	}
	for ok := true; ok; time.Sleep(10 * time.Millisecond) {
		ok, _, _ = client.Exists(ctx, n.Path())
	}
	fmt.Println("gone by itself")
	// Output:
	// registered, and touched
	// gone by itself
}

// Workers join a group and see who else is in it, and who comes and goes.
func ExampleGroupMember() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	var clients []*framework.Client // one per worker: each its own process, usually
	for i := 0; i < 2; i++ {
		c, err := framework.New(srv.ConnectString())
		if err != nil {
			log.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	members := func(g *nodes.GroupMember) string {
		var s []string
		for id, data := range g.Members() {
			s = append(s, id+"="+string(data))
		}
		sort.Strings(s)
		return strings.Join(s, " ")
	}

	w1, err := nodes.NewGroupMember(clients[0], "/services/workers", "worker-1", []byte("10.0.0.1:8080"))
	if err != nil {
		log.Fatal(err)
	}
	defer w1.Close()
	events := w1.Events()
	if err := w1.Start(ctx); err != nil {
		log.Fatal(err) // curator.ErrLocked: another live worker has this id
	}

	w2, err := nodes.NewGroupMember(clients[1], "/services/workers", "worker-2", []byte("10.0.0.2:8080"))
	if err != nil {
		log.Fatal(err)
	}
	if err := w2.Start(ctx); err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if ev.ID == "worker-2" {
			fmt.Printf("%s %s: %s\n", ev.ID, ev.Type, ev.Data)
			break
		}
	}
	fmt.Println("members:", members(w1))

	if err := w2.Close(); err != nil { // leaves: its node is deleted
		log.Fatal(err)
	}
	for ev := range events {
		if ev.ID == "worker-2" {
			fmt.Printf("%s %s\n", ev.ID, ev.Type)
			break
		}
	}
	fmt.Println("members:", members(w1))
	// Output:
	// worker-2 joined: 10.0.0.2:8080
	// members: worker-1=10.0.0.1:8080 worker-2=10.0.0.2:8080
	// worker-2 left
	// members: worker-1=10.0.0.1:8080
}
