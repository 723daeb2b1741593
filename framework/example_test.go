package framework_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

// ExampleNew connects to ZooKeeper (ZK_CONNECT, or a local server), works
// in a namespace, follows the connection state, writes a node and waits
// for it to change.
func ExampleNew() {
	connect := os.Getenv("ZK_CONNECT")
	if connect == "" {
		connect = "127.0.0.1:2181"
	}
	policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 5)
	if err != nil {
		log.Fatal(err)
	}
	client, err := framework.New(connect,
		framework.WithNamespace("example"),
		framework.WithSessionTimeout(15*time.Second),
		framework.WithRetryPolicy(policy))
	if err != nil {
		log.Fatal(err) // only invalid arguments fail here
	}
	defer client.Close()

	remove := client.AddListener(func(s framework.State) {
		// SUSPENDED: what depends on the session is in doubt;
		// LOST: ephemeral nodes are gone.
		log.Println("connection state:", s)
	})
	defer remove()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.BlockUntilConnected(ctx); err != nil {
		log.Fatal(err)
	}

	// The server sees /example/config/app: the namespace is added to every
	// path and stripped from every returned one.
	path, err := client.Create(ctx, "/config/app", []byte("v1"), framework.WithParents())
	if errors.Is(err, zk.ErrNodeExists) {
		path = "/config/app"
	} else if err != nil {
		log.Fatal(err)
	}
	data, _, watch, err := client.GetW(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	defer watch.Stop()
	fmt.Printf("%s = %s\n", path, data)

	select {
	case ev := <-watch.C():
		fmt.Println("changed:", ev.Type, ev.Path)
	case <-ctx.Done():
	}
}
