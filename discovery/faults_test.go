package discovery_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// recorder keeps a Cache's events.
type recorder struct {
	mu     sync.Mutex
	events []discovery.Event[payload]
}

func record(t *testing.T, ctx context.Context, d *discovery.Discovery[payload], name string) (*discovery.Cache[payload], *recorder) {
	t.Helper()
	c, err := d.NewCache(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &recorder{}
	c.AddListener(func(e discovery.Event[payload]) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
	})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c, r
}

// seen returns "type id" of every event recorded, Initialized and
// Rebuilt included.
func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, fmt.Sprint(e.Type, " ", e.ID))
	}
	return out
}

// czxid returns the creation zxid of path's node.
func czxid(t *testing.T, c *framework.Client, path string) int64 {
	t.Helper()
	_, st, err := c.Get(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Czxid
}

// A reconnection of the same session, after the connection dropped or was
// cut for less than the session timeout, changes nothing: the node is the
// same (its czxid), and a cache watching it sees no event (Curator deletes
// and registers again at each reconnection: CURATOR-320).
func TestNoFlapOnReconnect(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(8*time.Second))
	observer := newClient(t, srv.ConnectString())
	base := testenv.Path(t, "/disc")
	d := newDiscovery(t, c, base)
	if _, err := d.Register(ctx, discovery.Instance[payload]{Name: "api", ID: "a", Port: 1}); err != nil {
		t.Fatal(err)
	}
	od := newDiscovery(t, observer, base)
	_, rec := record(t, ctx, od, "api")
	before := czxid(t, observer, base+"/api/a")
	session := c.Session()

	reconnected := make(chan framework.State, 8)
	c.AddListener(func(s framework.State) {
		if s == framework.StateReconnected {
			reconnected <- s
		}
	})
	px.Drop() // the connection drops
	testenv.Recv(t, reconnected, testenv.WaitLong, "a reconnection after the drop")
	px.Blackhole() // cut, then healed inside the session timeout
	testenv.WaitFor(t, testenv.WaitLong, "the client suspended", func() bool { return !c.Connected() })
	px.Heal()
	testenv.Recv(t, reconnected, testenv.WaitLong, "a reconnection after the cut")
	if c.Session() != session {
		t.Fatal("the session changed: the cut outlasted the session timeout")
	}
	// A marker registered after the reconnections: its event comes after
	// any event the reconnections caused (one delivery goroutine, in order).
	if _, err := newDiscovery(t, observer, base).Register(ctx, discovery.Instance[payload]{Name: "api", ID: "marker"}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "the marker's event", func() bool {
		s := rec.seen()
		return len(s) > 0 && s[len(s)-1] == "created marker"
	})
	if got, want := fmt.Sprint(rec.seen()), "[created a initialized  created marker]"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if after := czxid(t, observer, base+"/api/a"); after != before {
		t.Errorf("the node was made again (czxid %d, was %d)", after, before)
	}
}

// A 3-node ensemble loses its leader: registrations made through it stay
// (their sessions move to another member), caches converge on what a
// fresh read shows, and a registration made after the loss is seen.
func TestRegistrationsSurviveLeaderLoss(t *testing.T) {
	cl := zktest.StartCluster(t, 3)
	ctx := testenv.Ctx(t, 3*time.Minute)
	base := "/disc-leader"
	var regs []*discovery.Discovery[payload]
	for range 3 {
		c := newClient(t, cl.ConnectString(), framework.WithSessionTimeout(8*time.Second))
		regs = append(regs, newDiscovery(t, c, base))
	}
	for i, d := range regs {
		if _, err := d.Register(ctx, discovery.Instance[payload]{Name: "api", ID: fmt.Sprint("i", i), Port: 1 + i}); err != nil {
			t.Fatal(err)
		}
	}
	observer := newClient(t, cl.ConnectString(), framework.WithSessionTimeout(8*time.Second))
	oc, _ := record(t, ctx, newDiscovery(t, observer, base), "api")
	before := czxid(t, observer, base+"/api/i0")

	leader, err := cl.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Members()[leader].Stop(); err != nil {
		t.Fatal(err)
	}
	if err := cl.WaitQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := regs[0].Register(ctx, discovery.Instance[payload]{Name: "api", ID: "late", Port: 9}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "the cache equal to a fresh read", func() error {
		fresh, err := newDiscovery(t, newClient(t, cl.ConnectString()), base).Instances(ctx, "api")
		if err != nil {
			return err
		}
		if got, want := fmt.Sprint(ids(oc.Instances())), fmt.Sprint(ids(fresh)); got != want || want != "[i0 i1 i2 late]" {
			return fmt.Errorf("cache %s, fresh read %s", got, want)
		}
		return nil
	})
	if after := czxid(t, observer, base+"/api/i0"); after != before {
		t.Errorf("i0 was made again (czxid %d, was %d) though its session lived", after, before)
	}
	if err := cl.Members()[leader].Start(); err != nil {
		t.Fatal(err)
	}
}

// A DynamicSequential instance is kept at its actual path: Update and
// Unregister reach it, and a session loss makes it again under the same
// name, never a second one (Curator loses track of it).
func TestDynamicSequential(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	observer := newClient(t, srv.ConnectString())
	base := testenv.Path(t, "/disc")
	d := newDiscovery(t, c, base)
	in, err := d.Register(ctx, discovery.Instance[payload]{Name: "api", ID: "seq", ServiceType: discovery.DynamicSequential})
	if err != nil {
		t.Fatal(err)
	}
	kids := testenv.Children(t, observer, base+"/api")
	if len(kids) != 1 {
		t.Fatalf("nodes %q, want one", kids)
	}
	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	in.Port = 7
	if err := d.Update(ctx, in); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.WaitLong, "the same node back, updated", func() error {
		now := testenv.Children(t, observer, base+"/api")
		if fmt.Sprint(now) != fmt.Sprint(kids) {
			return fmt.Errorf("nodes %q, want %q", now, kids)
		}
		all, err := newDiscovery(t, observer, base).Instances(ctx, "api")
		if err != nil || len(all) != 1 || all[0].Port != 7 {
			return fmt.Errorf("instances %+v, %v", all, err)
		}
		return nil
	})
	if err := d.Unregister(ctx, "seq"); err != nil {
		t.Fatal(err)
	}
	if now := testenv.Children(t, observer, base+"/api"); len(now) != 0 {
		t.Errorf("after Unregister: %q", now)
	}
}
