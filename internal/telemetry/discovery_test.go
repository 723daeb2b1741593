package telemetry_test

import (
	"testing"
	"time"

	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/telemetry/telemetrytest"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

const instances = telemetry.MetricDiscoveryInstances

var (
	service   = telemetry.KeyService.String
	discRecip = recipe(telemetry.RecipeDiscovery)
)

func newDiscovery(t *testing.T, c *framework.Client, base string) *discovery.Discovery[string] {
	t.Helper()
	d, err := discovery.New[string](c, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func register(t *testing.T, d *discovery.Discovery[string], name, id string) {
	t.Helper()
	if _, err := d.Register(testenv.Ctx(t, testenv.WaitLong), discovery.Instance[string]{Name: name, ID: id}); err != nil {
		t.Fatal(err)
	}
}

// A discovery cache's instances are counted by service as they come and
// go (a node that is no instance is none), two services apart (a
// Provider's cache counts too); with
// WithPathAttributes a point carries the service's path; Close takes the
// cache's instances out.
func TestDiscoveryInstances(t *testing.T) {
	rig := telemetrytest.New(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	base := path(t)
	reg := newDiscovery(t, testenv.Client(t, testenv.Shared().ConnectString()), base)
	register(t, reg, "api", "a1")
	register(t, reg, "api", "a2")
	register(t, reg, "web", "w1")
	// A node that is no instance, there before the first load (so read by
	// it): never counted.
	raw := testenv.Client(t, testenv.Shared().ConnectString())
	if _, err := raw.Create(ctx, base+"/api/garbage", []byte("no instance"), framework.WithMode(framework.ModeEphemeral)); err != nil {
		t.Fatal(err)
	}
	d := newDiscovery(t, client(t, rig, testenv.Shared().ConnectString(), framework.WithPathAttributes()), base)
	api, err := d.NewCache("api")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	web, err := d.NewProvider("web")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	if got := rig.Sum(t, instances); got != 0 {
		t.Fatalf("instances before Start: %d", got)
	}
	for _, start := range []func() error{func() error { return api.Start(ctx) }, func() error { return web.Start(ctx) }} {
		if err := start(); err != nil {
			t.Fatal(err)
		}
	}
	at := telemetry.KeyPath.String(base + "/api")
	if got := rig.Sum(t, instances, discRecip, service("api"), at); got != 2 {
		t.Errorf("api's instances after the first load: %d, want 2: %v", got, rig.Points(t, instances))
	}
	if got := rig.Sum(t, instances, discRecip, service("web"), telemetry.KeyPath.String(base+"/web")); got != 1 {
		t.Errorf("web's instances after the first load: %d, want 1: %v", got, rig.Points(t, instances))
	}

	register(t, reg, "api", "a3")
	rig.WaitSum(t, testenv.WaitLong, 3, instances, service("api"))
	if err := reg.Unregister(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitLong, 2, instances, service("api"))

	if err := api.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rig.Sum(t, instances, service("api")); got != 0 {
		t.Errorf("api's instances after Close: %d", got)
	}
	if err := web.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rig.Sum(t, instances); got != 0 {
		t.Errorf("instances after both closed: %d: %v", got, rig.Points(t, instances))
	}
}

// A registration lost and restored (its node deleted by someone else, or
// gone with an expired session, and made again) counts in
// curator.node.recreations as discovery's, with its service, not as a
// bare persistent node's; its first create is none. Once unregistered, a
// PersistentNode at its path counts as a persistent node again.
func TestDiscoveryRegistrationsRestored(t *testing.T) {
	rig := telemetrytest.New(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := client(t, rig, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	other := testenv.Client(t, srv.ConnectString())
	base := path(t)
	d := newDiscovery(t, c, base)
	register(t, d, "api", "one")
	node := base + "/api/one"
	if got := rig.Sum(t, recreations); got != 0 {
		t.Fatalf("re-creations after the registration: %d", got)
	}
	if err := other.Delete(ctx, node); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitLong, 1, recreations, discRecip, service("api"))
	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitLong, 2, recreations, discRecip, service("api"))
	if got := rig.Sum(t, recreations, recipe(telemetry.RecipePersistentNode)); got != 0 {
		t.Errorf("a registration's re-creations counted as a bare persistent node's too: %v", rig.Points(t, recreations))
	}
	if rig.HasKey(t, recreations, telemetry.KeyPath) {
		t.Error("curator.path without WithPathAttributes")
	}

	if err := d.Unregister(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	persistentNode(t, ctx, c, node)
	if err := other.Delete(ctx, node); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitLong, 1, recreations, recipe(telemetry.RecipePersistentNode))
	if got := rig.Sum(t, recreations, discRecip); got != 2 {
		t.Errorf("discovery's re-creations after Unregister: %d, want still 2", got)
	}
}
