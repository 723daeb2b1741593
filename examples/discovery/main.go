// Command discovery shows package discovery (Curator's curator-x-discovery):
// two instances of a service register, a client finds them through a
// Provider (round-robin) and a Cache's events, one instance's session
// expires and it comes back by itself, and one leaves.
//
//	go run ./examples/discovery     (ZK_CONNECT=host:port to use your ensemble)
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/testing/zktest"
)

func main() { zkenv.Main(run) }

// details is the instances' payload: JSON in the registry, as a Java
// service's would be.
type details struct {
	Zone string `json:"zone"`
}

func run(ctx context.Context, srv *zktest.Server) error {
	if err := zkenv.CheckExpiry(srv); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	// The client side: a provider of "billing" instances, and its cache's
	// events.
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		return err
	}
	defer client.Close()
	d, err := discovery.New[details](client, "/examples/services")
	if err != nil {
		return err
	}
	defer d.Close()
	p, err := d.NewProvider("billing")
	if err != nil {
		return err
	}
	defer p.Close()
	events := make(chan discovery.Event[details], 16)
	p.Cache().AddListener(func(e discovery.Event[details]) { events <- e })
	if err := p.Start(ctx); err != nil {
		return err
	}

	// Two service instances, each on a client (a session) of its own,
	// behind a fault proxy of its own so that its session can be expired.
	var services []*framework.Client
	var proxies []*zktest.Proxy
	for i, zone := range []string{"eu", "us"} {
		px, err := zktest.NewProxy(srv.Addr())
		if err != nil {
			return err
		}
		defer px.Close()
		proxies = append(proxies, px)
		c, err := framework.New(px.Addr()+srv.Chroot(), framework.WithSessionTimeout(4*time.Second))
		if err != nil {
			return err
		}
		defer c.Close()
		services = append(services, c)
		reg, err := discovery.New[details](c, "/examples/services")
		if err != nil {
			return err
		}
		defer reg.Close()
		if _, err := reg.Register(ctx, discovery.Instance[details]{Name: "billing", ID: fmt.Sprint("billing-", i),
			Address: "10.0.0.1", Port: 8080 + i, Payload: details{zone}}); err != nil {
			return err
		}
		if i == 1 {
			defer reg.Unregister(ctx, "billing-1")
		}
	}
	if err := await(ctx, events, cache.EventCreated, "billing-0", "billing-1"); err != nil {
		return err
	}
	for range 4 {
		in, ok := p.Instance()
		if !ok {
			return fmt.Errorf("no instance")
		}
		fmt.Printf("call %s at %s:%d (%s)\n", in.ID, in.Address, in.Port, in.Payload.Zone)
	}

	// billing-0's session expires: its node goes, and its PersistentNode
	// makes it again in the new session.
	fmt.Println("expiring billing-0's session")
	if err := zktest.ExpireSession(ctx, proxies[0], srv, services[0].Session().ID()); err != nil {
		return err
	}
	if err := await(ctx, events, cache.EventDeleted, "billing-0"); err != nil {
		return err
	}
	if err := await(ctx, events, cache.EventCreated, "billing-0"); err != nil {
		return err
	}
	fmt.Println("instances:", len(p.All()))
	return nil
}

// await prints the cache's events until it has seen one of type typ for
// each id.
func await(ctx context.Context, events <-chan discovery.Event[details], typ cache.EventType, ids ...string) error {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for len(want) > 0 {
		select {
		case e := <-events:
			if e.ID != "" {
				fmt.Printf("event: %s %s\n", e.Type, e.ID)
			}
			if e.Type == typ {
				delete(want, e.ID)
			}
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s of %v: %w", typ, ids, ctx.Err())
		}
	}
	return nil
}
