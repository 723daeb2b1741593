package interop_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// A Java payload is a HashMap: Jackson names it {"@class":"java.util.HashMap",...}.
type javaMap = map[string]string

const hashMap = "java.util.HashMap"

// showGo renders instances as DiscoveryCommands.java's <inst>, sorted by id.
func showGo(all []discovery.Instance[javaMap]) string {
	out := make([]string, 0, len(all))
	for _, in := range all {
		keys := make([]string, 0, len(in.Payload))
		for k := range in.Payload {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, k+"="+in.Payload[k])
		}
		out = append(out, fmt.Sprintf("%s|%s|%d|%s|%t", in.ID, in.Address, in.Port, strings.Join(kv, ";"), !in.Disabled))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// Go and Java (curator-x-discovery 5.4) share one registry: each reads the
// other's instances, payload included, through queries, caches and
// providers; Java writes a Go instance back byte for byte; unregistering
// is seen on both sides.
func testDiscovery(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	base := e.path(t)
	java := e.startPeers(t, 1)[0]
	c := newClient(t, e)
	d, err := discovery.New[javaMap](c, base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	java.must(fmt.Sprintf("disc-register %s api j1 10.0.0.1 8080 zone=eu;tier=web", base))
	g1, err := d.Register(ctx, discovery.Instance[javaMap]{Name: "api", ID: "g1", Address: "10.0.0.2", Port: 8081,
		Payload: javaMap{"zone": "us"}, PayloadClass: hashMap})
	if err != nil {
		t.Fatal(err)
	}
	want := "g1|10.0.0.2|8081|zone=us|true,j1|10.0.0.1|8080|tier=web;zone=eu|true"

	// Java reads the Go instance; Go reads the Java one.
	if got := java.must("disc-instances " + base + " api"); got != want {
		t.Errorf("Java's queryForInstances:\n got %s\nwant %s", got, want)
	}
	all, err := d.Instances(ctx, "api")
	if err != nil {
		t.Fatal(err)
	}
	if got := showGo(all); got != want {
		t.Errorf("Go's Instances:\n got %s\nwant %s", got, want)
	}
	if j1, _ := d.Instance(ctx, "api", "j1"); j1.PayloadClass != hashMap || j1.ServiceType != discovery.Dynamic || j1.RegistrationTime.IsZero() {
		t.Errorf("Java's instance as Go reads it: %+v", j1)
	}
	if names, err := d.Names(ctx); err != nil || strings.Join(names, ",") != "api" {
		t.Errorf("Names %q, %v", names, err)
	}
	if got := java.must("disc-names " + base); got != "api" {
		t.Errorf("Java's queryForNames: %s", got)
	}

	// Java writes Go's instance again with the bytes Go wrote.
	raw, _, err := c.Get(ctx, base+"/api/g1")
	if err != nil {
		t.Fatal(err)
	}
	if got := java.must("disc-reserialize " + base + " api g1"); got != string(raw) {
		t.Errorf("Java re-serializes Go's instance differently:\n java %s\n go   %s", got, raw)
	}

	// Caches on both sides.
	gcache, err := d.NewCache("api")
	if err != nil {
		t.Fatal(err)
	}
	defer gcache.Close()
	if err := gcache.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := showGo(gcache.Instances()); got != want {
		t.Errorf("Go's cache:\n got %s\nwant %s", got, want)
	}
	java.must("disc-cache-start " + base + " api")
	if got := java.must("disc-cache " + base + " api"); got != want {
		t.Errorf("Java's ServiceCache:\n got %s\nwant %s", got, want)
	}

	// Updates and departures, seen on the other side.
	g1.Disabled = true
	if err := d.Update(ctx, g1); err != nil {
		t.Fatal(err)
	}
	java.must(fmt.Sprintf("disc-update %s api j1 10.0.0.1 9090 zone=eu", base))
	want = "g1|10.0.0.2|8081|zone=us|false,j1|10.0.0.1|9090|zone=eu|true"
	eventually(t, "Java sees Go's update", func() bool { return java.must("disc-cache "+base+" api") == want },
		func() string { return java.must("disc-cache " + base + " api") })
	eventually(t, "Go sees Java's update", func() bool { return showGo(gcache.Instances()) == want },
		func() string { return showGo(gcache.Instances()) })
	// Java's provider never hands out the disabled Go instance.
	for range 4 {
		if got := java.must("disc-provider " + base + " api"); got != "j1" {
			t.Fatalf("Java's ServiceProvider gave %s, want j1 (g1 is disabled)", got)
		}
	}
	java.must("disc-unregister " + base + " api j1")
	if err := d.Unregister(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Java's cache empty", func() bool { return java.must("disc-cache "+base+" api") == "" },
		func() string { return java.must("disc-cache " + base + " api") })
	eventually(t, "Go's cache empty", func() bool { return len(gcache.Instances()) == 0 },
		func() string { return showGo(gcache.Instances()) })
}

// A Go instance whose session expires is gone for Java's cache and back
// within a session timeout of the new session; a Java one whose session
// expires comes back too (Curator re-registers on RECONNECTED), and Go's
// cache sees both return.
func testDiscoveryExpiry(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	base := e.path(t)
	jpx := zktest.StartProxy(t, e.zk.Addr())
	java := e.launch(t, "java-expiring")
	java.must("connect " + jpx.Addr() + e.zk.Chroot())
	gpx := zktest.StartProxy(t, e.zk.Addr())
	gc, err := framework.New(gpx.Addr()+e.zk.Chroot(), framework.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	d, err := discovery.New[javaMap](gc, base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Register(ctx, discovery.Instance[javaMap]{Name: "api", ID: "g", Address: "h", Port: 1}); err != nil {
		t.Fatal(err)
	}
	java.must(fmt.Sprintf("disc-register %s api j h 2 -", base))
	java.must("disc-cache-start " + base + " api")
	observer, err := discovery.New[javaMap](newClient(t, e), base)
	if err != nil {
		t.Fatal(err)
	}
	gcache, err := observer.NewCache("api")
	if err != nil {
		t.Fatal(err)
	}
	defer gcache.Close()
	if err := gcache.Start(ctx); err != nil {
		t.Fatal(err)
	}
	both := "g|h|1||true,j|h|2||true"
	if got := showGo(gcache.Instances()); got != both {
		t.Fatalf("Go's cache before: %s", got)
	}

	old := gc.Session()
	if err := zktest.ExpireSession(ctx, gpx, e.zk, old.ID()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Go instance back in a new session, for Java's cache", func() bool {
		s := gc.Session()
		return s != nil && s != old && java.must("disc-cache "+base+" api") == both
	}, func() string { return java.must("disc-cache " + base + " api") })

	sid, err := strconv.ParseInt(java.must("session-id"), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, jpx, e.zk, sid); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Java instance back in a new session, for Go's cache", func() bool {
		got, _ := strconv.ParseInt(java.must("session-id"), 16, 64)
		return got != sid && showGo(gcache.Instances()) == both
	}, func() string { return showGo(gcache.Instances()) })
}
