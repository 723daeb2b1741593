package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newClient(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.Client(t, connect, append([]framework.Option{framework.WithRetryPolicy(testenv.Patient{})}, opts...)...)
}

type payload struct {
	Zone string `json:"zone"`
}

func newDiscovery(t *testing.T, c *framework.Client, base string, opts ...discovery.Option) *discovery.Discovery[payload] {
	t.Helper()
	d, err := discovery.New[payload](c, base, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Register, read back, update, unregister: the node is at Curator's path,
// holds Curator's bytes, and is gone after Unregister; Names and Instances
// read ZooKeeper.
func TestRegisterAndQuery(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	base := testenv.Path(t, "/disc")
	d := newDiscovery(t, c, base)

	if names, err := d.Names(ctx); err != nil || len(names) != 0 {
		t.Fatalf("Names on a fresh base: %q, %v (want none, no error)", names, err)
	}
	a, err := d.Register(ctx, discovery.Instance[payload]{Name: "api", Address: "10.0.0.1", Port: 8080, Payload: payload{"eu"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ID) != 36 || a.RegistrationTime.IsZero() || a.ServiceType != discovery.Dynamic {
		t.Errorf("defaults not filled: %+v", a)
	}
	b, err := d.Register(ctx, discovery.Instance[payload]{Name: "api", ID: "b", Address: "10.0.0.2", Port: 8080, ServiceType: discovery.Static})
	if err != nil {
		t.Fatal(err)
	}
	data, st, err := c.Get(ctx, base+"/api/"+a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := a.Marshal(discovery.WithEnabled); string(data) != string(want) {
		t.Errorf("node holds %s, want %s", data, want)
	}
	if st.EphemeralOwner != c.Session().ID() {
		t.Errorf("DYNAMIC instance's node not ephemeral of our session: owner 0x%x", st.EphemeralOwner)
	}
	if _, st, _ := c.Get(ctx, base+"/api/b"); st == nil || st.EphemeralOwner != 0 {
		t.Errorf("STATIC instance's node not persistent: %+v", st)
	}
	if names, err := d.Names(ctx); err != nil || !reflect.DeepEqual(names, []string{"api"}) {
		t.Errorf("Names %q, %v", names, err)
	}
	all, err := d.Instances(ctx, "api")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || !reflect.DeepEqual(pick(all, a.ID), a) || !reflect.DeepEqual(pick(all, "b"), b) {
		t.Errorf("Instances: %+v\nwant %+v and %+v", all, a, b)
	}

	a.Payload.Zone, a.Disabled = "us", true
	if err := d.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := d.Instance(ctx, "api", a.ID)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Errorf("after Update: %+v, %v; want %+v", got, err, a)
	}
	if err := d.Unregister(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Instance(ctx, "api", "b"); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("after Unregister: %v, want zk.ErrNoNode", err)
	}
	if err := d.Unregister(ctx, "b"); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("second Unregister: %v, want ErrNotHeld", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := c.Exists(ctx, base+"/api/"+a.ID); ok {
		t.Error("Close left the instance registered")
	}
	if _, err := d.Register(ctx, discovery.Instance[payload]{Name: "api"}); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Register after Close: %v, want ErrClosed", err)
	}
}

func pick(all []discovery.Instance[payload], id string) discovery.Instance[payload] {
	for _, in := range all {
		if in.ID == id {
			return in
		}
	}
	return discovery.Instance[payload]{}
}

// A registration survives a session expiry: back within one session
// timeout of the new session, with its latest data, and only once.
func TestRegistrationSurvivesExpiry(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	reader := newClient(t, srv.ConnectString())
	base := testenv.Path(t, "/disc")
	d := newDiscovery(t, c, base)
	in, err := d.Register(ctx, discovery.Instance[payload]{Name: "api", ID: "one", Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	old := c.Session()
	if err := zktest.ExpireSession(ctx, px, srv, old.ID()); err != nil {
		t.Fatal(err)
	}
	in.Port = 2
	if err := d.Update(ctx, in); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.WaitLong, "the instance back, in the new session, with port 2", func() error {
		kids, _, err := reader.Children(ctx, base+"/api")
		if err != nil {
			return err
		}
		if len(kids) != 1 {
			return fmt.Errorf("instances %q, want one", kids)
		}
		data, st, err := reader.Get(ctx, base+"/api/one")
		if err != nil {
			return err
		}
		var got discovery.Instance[payload]
		if err := got.Unmarshal(data); err != nil {
			return err
		}
		if s := c.Session(); s == nil || s == old || st.EphemeralOwner != s.ID() || got.Port != 2 {
			return fmt.Errorf("owner 0x%x, port %d", st.EphemeralOwner, got.Port)
		}
		return nil
	})
}

// Another live session's instance with the same id is waited for, never
// deleted: Register ends with ctx, wrapping ErrLocked, and changes nothing.
func TestDuplicateIDWaitsNeverSteals(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	base := testenv.Path(t, "/disc")
	first := newDiscovery(t, newClient(t, testenv.Shared().ConnectString()), base)
	second := newDiscovery(t, newClient(t, testenv.Shared().ConnectString()), base)
	if _, err := first.Register(ctx, discovery.Instance[payload]{Name: "api", ID: "dup", Port: 1}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := second.Register(short, discovery.Instance[payload]{Name: "api", ID: "dup", Port: 2})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("second Register: %v, want the deadline with ErrLocked", err)
	}
	if got, err := first.Instance(ctx, "api", "dup"); err != nil || got.Port != 1 {
		t.Errorf("the first instance: %+v, %v", got, err)
	}
	if len(second.Registered()) != 0 {
		t.Error("a failed Register left a registration")
	}
}

// A Cache sees instances come, change and go as events, and a Provider
// hands them out round-robin, skipping disabled and down instances.
func TestCacheAndProvider(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	base := testenv.Path(t, "/disc")
	reg := newDiscovery(t, newClient(t, testenv.Shared().ConnectString()), base)
	d := newDiscovery(t, newClient(t, testenv.Shared().ConnectString()), base)
	if _, err := reg.Register(ctx, discovery.Instance[payload]{Name: "api", ID: "a", Port: 1}); err != nil {
		t.Fatal(err)
	}
	p, err := d.NewProvider("api", discovery.WithDownPolicy(time.Hour, 2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	events := make(chan discovery.Event[payload], 100)
	p.Cache().AddListener(func(e discovery.Event[payload]) { events <- e })
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if e := testenv.Recv(t, events, testenv.WaitLong, "a created"); e.Type != cache.EventCreated || e.ID != "a" || e.New.Port != 1 {
		t.Fatalf("first event %+v", e)
	}
	if e := testenv.Recv(t, events, testenv.WaitLong, "initialized"); e.Type != cache.EventInitialized {
		t.Fatalf("second event %+v", e)
	}
	for _, id := range []string{"b", "c"} {
		if _, err := reg.Register(ctx, discovery.Instance[payload]{Name: "api", ID: id, Port: 1}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, testenv.WaitLong, "three instances", func() bool { return len(p.All()) == 3 })
	seen := map[string]int{}
	for range 30 {
		in, ok := p.Instance()
		if !ok {
			t.Fatal("no instance")
		}
		seen[in.ID]++
	}
	if !reflect.DeepEqual(seen, map[string]int{"a": 10, "b": 10, "c": 10}) {
		t.Errorf("round robin: %v", seen)
	}
	b, _ := p.Cache().Instance("b")
	p.NoteError(b)
	if len(p.All()) != 3 {
		t.Error("down after one error, threshold 2")
	}
	p.NoteError(b)
	if ids := ids(p.All()); !reflect.DeepEqual(ids, []string{"a", "c"}) {
		t.Errorf("with b down: %q", ids)
	}
	c, _ := p.Cache().Instance("c")
	c.Disabled = true
	if err := reg.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "c disabled", func() bool { return reflect.DeepEqual(ids(p.All()), []string{"a"}) })
	if err := reg.Unregister(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitLong, "a gone", func() bool { _, ok := p.Instance(); return !ok })
}

func ids(all []discovery.Instance[payload]) []string {
	out := []string{}
	for _, in := range all {
		out = append(out, in.ID)
	}
	return out
}

func TestBadInput(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	c := newClient(t, testenv.Shared().ConnectString())
	if _, err := discovery.New[payload](nil, "/x"); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil client: %v", err)
	}
	if _, err := discovery.New[payload](c, "x"); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("relative base: %v", err)
	}
	if _, err := discovery.New[payload](c, "/x", discovery.WithEncoding(7)); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("bad encoding: %v", err)
	}
	d := newDiscovery(t, c, testenv.Path(t, "/disc"))
	for name, in := range map[string]discovery.Instance[payload]{
		"no name":        {},
		"slash in name":  {Name: "a/b"},
		"slash in id":    {Name: "a", ID: "x/y"},
		"dot id":         {Name: "a", ID: ".."},
		"bad type":       {Name: "a", ServiceType: "ELASTIC"},
		"port too large": {Name: "a", Port: 70000},
	} {
		if _, err := d.Register(ctx, in); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if _, err := d.Register(nil, discovery.Instance[payload]{Name: "a"}); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil ctx: %v", err)
	}
	if err := d.Update(ctx, discovery.Instance[payload]{Name: "a", ID: "never"}); !errors.Is(err, curator.ErrNotHeld) {
		t.Errorf("Update of an unregistered id: %v", err)
	}
	if _, err := d.Instances(ctx, "a/b"); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("Instances of a bad name: %v", err)
	}
	if _, err := d.NewProvider("a", discovery.WithInstanceFilter(func(discovery.Instance[string]) bool { return true })); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("filter of another payload type: %v", err)
	}
	if _, err := d.NewProvider("a", discovery.WithStrategy(nil)); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("nil strategy: %v", err)
	}
	in, err := d.Register(ctx, discovery.Instance[payload]{Name: "a", ID: "i"})
	if err != nil {
		t.Fatal(err)
	}
	in.Name = "b"
	if err := d.Update(ctx, in); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("Update under another name: %v", err)
	}
}
