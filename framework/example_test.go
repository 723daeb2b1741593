package framework_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/testing/zktest"
)

// New starts connecting at once; BlockUntilConnected waits for the first
// connection (operations wait for it by themselves too).
func ExampleNew() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 5)
	if err != nil {
		log.Fatal(err)
	}
	client, err := framework.New(srv.ConnectString(), // "host:port,host:port[/chroot]"
		framework.WithSessionTimeout(15*time.Second),
		framework.WithConnectionTimeout(5*time.Second),
		framework.WithRetryPolicy(policy))
	if err != nil {
		log.Fatal(err) // only invalid arguments (and unresolvable hosts) fail here
	}
	defer client.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.BlockUntilConnected(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("state:", client.State(), "connected:", client.Connected())
	// The server may grant less than asked (its maxSessionTimeout).
	fmt.Println("session timeout granted:", client.Session().Timeout())

	// Invalid options are errors, never silently fixed.
	_, err = framework.New(srv.ConnectString(), framework.WithSessionTimeout(0))
	fmt.Println("zero session timeout, ErrInvalidArgument:", errors.Is(err, curator.ErrInvalidArgument))
	// Output:
	// state: CONNECTED connected: true
	// session timeout granted: 15s
	// zero session timeout, ErrInvalidArgument: true
}

// Optimistic concurrency with node versions: a write with WithVersion
// succeeds only if nobody wrote since the read.
func ExampleClient_Set() {
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

	path, err := client.Create(ctx, "/config/app", []byte("v1"), framework.WithParents())
	if err != nil {
		log.Fatal(err)
	}
	data, st, err := client.Get(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s = %s (version %d)\n", path, data, st.Version)

	// Write v2 on top of what was read.
	st2, err := client.Set(ctx, path, []byte("v2"), framework.WithVersion(st.Version))
	fmt.Println("set v2:", err, "version", st2.Version)

	// A second write based on the same, now stale, read is refused.
	_, err = client.Set(ctx, path, []byte("v2bis"), framework.WithVersion(st.Version))
	fmt.Println("stale set, zk.ErrBadVersion:", errors.Is(err, zk.ErrBadVersion))

	data, _, err = client.Get(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s = %s\n", path, data)
	// Output:
	// /config/app = v1 (version 0)
	// set v2: <nil> version 1
	// stale set, zk.ErrBadVersion: true
	// /config/app = v2
}

// A protected ephemeral-sequential create, as every lock recipe makes its
// nodes: the name carries "_c_<uuid>-", so that a create whose reply was
// lost is found again instead of leaving an orphan.
func ExampleWithProtection() {
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

	node, err := client.CreateNode(ctx, "/workers/worker-", []byte("10.0.0.7:8080"),
		framework.WithProtection(),
		framework.WithMode(framework.ModeEphemeralSequential),
		framework.WithParentContainers()) // the server reaps /workers once empty
	if err != nil {
		log.Fatal(err)
	}
	name := framework.NodeName(node.Path) // "_c_<uuid>-worker-0000000000"
	id, ok := framework.ProtectedID(name)
	fmt.Println("protected:", framework.IsProtected(name), "id found:", ok, "id length:", len(id))
	fmt.Println("name without protection:", framework.NormalizeName(name))
	// An ephemeral node lives exactly as long as its session.
	fmt.Println("in the current session:", node.Session == client.Session())
	// Output:
	// protected: true id found: true id length: 36
	// name without protection: worker-0000000000
	// in the current session: true
}

// ProtectedID, IsProtected and NormalizeName read the names of protected
// nodes, Curator's or ours (Curator's ProtectedUtils).
func ExampleProtectedID() {
	id := framework.NewProtectedID()
	name := framework.ProtectedName(id, "lock-0000000007")
	got, ok := framework.ProtectedID(name)
	fmt.Println(ok, got == id, framework.NormalizeName(name))

	// A name that merely starts with "_c_" is not protected.
	_, ok = framework.ProtectedID("_c_lock-0000000007")
	fmt.Println(ok, framework.IsProtected("_c_lock-0000000007"))
	// Output:
	// true true lock-0000000007
	// false false
}

// A guaranteed delete that cannot be confirmed (here the network is cut
// and the caller's deadline passes) goes on in the background: the error
// says so, and Wait tells when it is done.
func ExampleWithGuarantee() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	// The client talks to ZooKeeper through a fault proxy.
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

	for _, p := range []string{"/jobs/41", "/jobs/42"} {
		if _, err := client.Create(ctx, p, nil, framework.WithParents()); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("delete /jobs/41:", client.Delete(ctx, "/jobs/41", framework.WithGuarantee()))

	px.Blackhole() // a network partition
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	err = client.Delete(short, "/jobs/42", framework.WithGuarantee())
	cancelShort()
	var pending *framework.DeletePendingError
	if errors.As(err, &pending) { // errors.Is(err, curator.ErrDeletePending) too
		fmt.Println("delete /jobs/42 pending:", pending.Path)
		px.Heal() // the partition ends; the client deletes the node
		fmt.Println("background delete:", pending.Wait(ctx))
	}
	ok, _, err := client.Exists(ctx, "/jobs/42")
	fmt.Println("/jobs/42 exists:", ok, err)
	// Output:
	// delete /jobs/41: <nil>
	// delete /jobs/42 pending: /jobs/42
	// background delete: <nil>
	// /jobs/42 exists: false <nil>
}

// DeleteInBackground does not wait: the delete is retried on every
// reconnection until done, and the handle tells its outcome.
func ExampleClient_DeleteInBackground() {
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

	if _, err := client.Create(ctx, "/tmp/scratch/a", nil, framework.WithParents()); err != nil {
		log.Fatal(err)
	}
	done := client.DeleteInBackground("/tmp/scratch/a")
	// ... go on with other work ...
	fmt.Println("delete /tmp/scratch/a:", done.Wait(ctx))

	// A delete the server refuses ends with the server's error.
	if _, err := client.Create(ctx, "/tmp/scratch/b", nil); err != nil {
		log.Fatal(err)
	}
	err = client.DeleteInBackground("/tmp/scratch").Wait(ctx)
	fmt.Println("delete /tmp/scratch, zk.ErrNotEmpty:", errors.Is(err, zk.ErrNotEmpty))
	// With WithChildren it deletes the children first.
	err = client.DeleteInBackground("/tmp/scratch", framework.WithChildren()).Wait(ctx)
	fmt.Println("delete /tmp/scratch with its children:", err)
	fmt.Println("pending:", client.PendingBackground())
	// Output:
	// delete /tmp/scratch/a: <nil>
	// delete /tmp/scratch, zk.ErrNotEmpty: true
	// delete /tmp/scratch with its children: <nil>
	// pending: 0
}

// A transaction: all its operations or none. CheckOp makes it depend on a
// node's version.
func ExampleClient_Multi() {
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

	for _, n := range []struct{ path, data string }{
		{"/rates", "v1"}, {"/rates/eur", "1.00"}, {"/rates/usd", "1.10"},
	} {
		if _, err := client.Create(ctx, n.path, []byte(n.data)); err != nil {
			log.Fatal(err)
		}
	}
	_, epoch, err := client.Get(ctx, "/rates")
	if err != nil {
		log.Fatal(err)
	}

	// Both rates change together, and only if /rates is as read.
	res, err := client.Multi(ctx,
		framework.CheckOp{Path: "/rates", Version: epoch.Version},
		framework.SetDataOp{Path: "/rates/eur", Data: []byte("1.01"), Version: -1},
		framework.SetDataOp{Path: "/rates/usd", Data: []byte("1.12"), Version: -1})
	fmt.Println("first:", err, "usd version", res[2].Stat.Version)

	// Someone moves /rates on: the same transaction now changes nothing.
	if _, err := client.Set(ctx, "/rates", []byte("v2")); err != nil {
		log.Fatal(err)
	}
	res, err = client.Multi(ctx,
		framework.CheckOp{Path: "/rates", Version: epoch.Version},
		framework.SetDataOp{Path: "/rates/eur", Data: []byte("0.99"), Version: -1},
		framework.SetDataOp{Path: "/rates/usd", Data: []byte("1.09"), Version: -1})
	fmt.Println("second, zk.ErrBadVersion:", errors.Is(err, zk.ErrBadVersion),
		"failing op is the check:", errors.Is(res[0].Err, zk.ErrBadVersion))
	eur, _, err := client.Get(ctx, "/rates/eur")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("eur = %s\n", eur)
	// Output:
	// first: <nil> usd version 1
	// second, zk.ErrBadVersion: true failing op is the check: true
	// eur = 1.01
}

// A data watch fires once, when the node changes or goes. Stop a watch
// you no longer wait for: nothing of it stays in the client.
func ExampleClient_GetW() {
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

	if _, err := client.Create(ctx, "/feature-flags", []byte("dark-mode=off")); err != nil {
		log.Fatal(err)
	}
	data, _, watch, err := client.GetW(ctx, "/feature-flags")
	if err != nil {
		log.Fatal(err)
	}
	defer watch.Stop()
	fmt.Printf("read: %s\n", data)

	// Another process (here, the same client) changes the node.
	if _, err := client.Set(ctx, "/feature-flags", []byte("dark-mode=on")); err != nil {
		log.Fatal(err)
	}
	select {
	case ev := <-watch.C():
		fmt.Println("event:", ev.Type, ev.Path)
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	data, _, err = client.Get(ctx, "/feature-flags") // read again (and watch again, with GetW)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read: %s\n", data)

	// A waiter that gives up stops its watch.
	_, _, w2, err := client.GetW(ctx, "/feature-flags")
	if err != nil {
		log.Fatal(err)
	}
	w2.Stop()
	watch.Stop()
	_, waiters := client.WatchStats()
	fmt.Println("waiters left:", waiters)
	// Output:
	// read: dark-mode=off
	// event: NodeDataChanged /feature-flags
	// read: dark-mode=on
	// waiters left: 0
}

// A namespace prefixes every path the client sends and is stripped from
// every path it returns, so an application can own a subtree.
func ExampleWithNamespace() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	orders, err := framework.New(srv.ConnectString(), framework.WithNamespace("orders"))
	if err != nil {
		log.Fatal(err)
	}
	defer orders.Close()
	root, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	path, err := orders.Create(ctx, "/config", []byte("x"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", path)
	ok, _, err := root.Exists(ctx, "/orders/config")
	fmt.Println("the server has /orders/config:", ok, err)
	// Output:
	// created: /config
	// the server has /orders/config: true <nil>
}

// WithParentChildren lists the parent's children behind a create, in the
// same round trip: a queue's new member learns its place from its create.
func ExampleWithParentChildren() {
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

	if _, err := client.Create(ctx, "/queue", nil); err != nil {
		log.Fatal(err)
	}
	opts := []framework.OpOption{framework.WithMode(framework.ModeEphemeralSequential),
		framework.WithProtection(), framework.WithParentChildren()}
	if _, err := client.CreateNode(ctx, "/queue/item-", nil, opts...); err != nil {
		log.Fatal(err)
	}
	n, err := client.CreateNode(ctx, "/queue/item-", nil, opts...)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("children after our create:", len(n.Children), n.Parent.NumChildren)
	fmt.Println("ours among them:", slices.Contains(n.Children, framework.NodeName(n.Path)))
	// Output:
	// children after our create: 2 2
	// ours among them: true
}

// MarkNode keeps a watch on a node that nobody waits on: the Mark tells,
// without a request, that the node has neither changed nor gone since, as
// far as the client's later replies show. (The lock driver marks a
// waiter's own node so that, when its predecessor goes, it knows its node
// is still there without asking.)
func ExampleClient_MarkNode() {
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

	if _, err := client.Create(ctx, "/job", nil); err != nil {
		log.Fatal(err)
	}
	m, err := client.MarkNode(ctx, "/job")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("unchanged:", m.Intact())
	if err := client.Delete(ctx, "/job"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("unchanged:", m.Intact())
	_, err = client.MarkNode(ctx, "/job")
	fmt.Println("a missing node:", errors.Is(err, zk.ErrNoNode))
	// Output:
	// unchanged: true
	// unchanged: false
	// a missing node: true
}

// The default retry policy, for a policy of one's own that wraps it.
func ExampleDefaultRetryPolicy() {
	p := framework.DefaultRetryPolicy()
	_, again := p.Next(0, 0)
	_, fourth := p.Next(3, 0)
	fmt.Println(again, fourth)
	// Output: true false
}
