package main_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
)

// javaBytes is an instance exactly as Curator 5.4's JsonInstanceSerializer
// writes it in its default (compatible) mode, as discovery's
// curatorBytes, for service name and id, with a POJO payload in
// Jackson's form (@class first).
func javaBytes(name, id string) string {
	return `{"name":"` + name + `","id":"` + id + `","address":"10.0.0.1","port":8080,"sslPort":null,` +
		`"payload":{"@class":"com.example.Details","desc":"hi","n":3},"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC",` +
		`"uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://foo.com:","variable":false},{"value":"port","variable":true}]}}`
}

type zone struct {
	Zone string `json:"zone"`
}

// registry is a registry under base with service "api": two instances
// registered by discovery.Discovery (one DYNAMIC and disabled, one
// STATIC), one written as Java's bytes by a raw ephemeral create of
// another session, a node of garbage and one the ACL refuses; and service
// "web" with one Java instance.
type registry struct {
	base          string
	goClient      *framework.Client
	javaClient    *framework.Client
	dynamic, stat discovery.Instance[zone]
}

func newRegistry(t *testing.T, e *env) *registry {
	ctx := testenv.Ctx(t, testTimeout)
	r := &registry{base: e.path(t) + "/services", goClient: newClient(t, e), javaClient: newClient(t, e)}
	d, err := discovery.New[zone](r.goClient, r.base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if r.dynamic, err = d.Register(ctx, discovery.Instance[zone]{Name: "api", ID: "go-1", Address: "10.0.0.2", Port: 9090, SSLPort: 9443,
		Payload: zone{"eu"}, Disabled: true}); err != nil {
		t.Fatal(err)
	}
	if r.stat, err = d.Register(ctx, discovery.Instance[zone]{Name: "api", ID: "go-static", Address: "10.0.0.3", Port: 80,
		ServiceType: discovery.Static}); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{r.base + "/api/java-1": javaBytes("api", "java-1"), r.base + "/web/java-2": javaBytes("web", "java-2")} {
		if _, err := r.javaClient.Create(ctx, p, []byte(data), framework.WithMode(framework.ModeEphemeral), framework.WithParentContainers()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.javaClient.Create(ctx, r.base+"/api/garbage", []byte("not an instance"), framework.WithMode(framework.ModeEphemeral)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.javaClient.Create(ctx, r.base+"/api/secret", []byte(javaBytes("api", "secret")),
		framework.WithMode(framework.ModeEphemeral), framework.WithACL(zk.DigestACL(zk.PermAll, "ops", "s3cret")...)); err != nil {
		t.Fatal(err)
	}
	return r
}

// registryOf parses services --json.
func registryOf(t *testing.T, r result) *inspect.Registry {
	t.Helper()
	var reg inspect.Registry
	if err := json.Unmarshal([]byte(r.stdout), &reg); err != nil {
		t.Fatalf("services --json printed no JSON document: %v\n%s", err, r)
	}
	return &reg
}

// compact is a payload as one line (--json indents it).
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return err.Error()
	}
	return b.String()
}

func unreadable(reg *inspect.Registry) []string {
	var out []string
	for _, p := range reg.Unreadable {
		out = append(out, p.Path)
	}
	return out
}

// services lists the services and, with NAME, their instances, Go's and
// Java's alike, each field as registered; unreadable nodes are listed as
// such (exit status 3), the rest all the same.
func testServices(t *testing.T, e *env) {
	r := newRegistry(t, e)
	wantBad := []string{r.base + "/api/garbage", r.base + "/api/secret"}

	res := e.run(t, "services", "--base", r.base, "--json")
	if res.code != 3 {
		t.Fatalf("services with unreadable nodes: %s; want exit 3", res)
	}
	reg := registryOf(t, res)
	var counts []string
	for _, s := range reg.Services {
		counts = append(counts, s.Name+"="+strings.Repeat("i", len(s.Instances)))
	}
	if !slices.Equal(counts, []string{"api=iii", "web=i"}) || reg.Base != r.base || !slices.Equal(unreadable(reg), wantBad) {
		t.Errorf("services %v (base %s), unreadable %v", counts, reg.Base, unreadable(reg))
	}
	table := e.run(t, "services", "--base", r.base).stdout
	for _, want := range []string{"SERVICE  INSTANCES  ENABLED", "api      3          2", "web      1          1", "unreadable", r.base + "/api/garbage: discovery: not an instance"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}

	res = e.run(t, "services", "api", "--base", r.base, "--json")
	reg = registryOf(t, res)
	if res.code != 3 || len(reg.Services) != 1 || !slices.Equal(unreadable(reg), wantBad) {
		t.Fatalf("services api: %s", res)
	}
	byID := map[string]inspect.Instance{}
	for _, in := range reg.Services[0].Instances {
		byID[in.ID] = in
	}
	g, s, j := byID["go-1"], byID["go-static"], byID["java-1"]
	if len(byID) != 3 || g.Name != "api" || g.Address != "10.0.0.2" || g.Port != 9090 || g.SSLPort != 9443 || g.Enabled ||
		g.ServiceType != "DYNAMIC" || !g.RegistrationTime.Equal(r.dynamic.RegistrationTime) || compact(g.Payload) != `{"zone":"eu"}` ||
		g.Node.Session != sessionOf(r.goClient) || g.Node.Path != r.base+"/api/go-1" {
		t.Errorf("Go's DYNAMIC instance: %+v", g)
	}
	if s.ServiceType != "STATIC" || s.Node.Session != "0x0" || !s.Enabled || compact(s.Payload) != `{"zone":""}` {
		t.Errorf("Go's STATIC instance: %+v", s)
	}
	if j.Address != "10.0.0.1" || j.Port != 8080 || j.SSLPort != 0 || !j.Enabled || j.ServiceType != "DYNAMIC" ||
		!j.RegistrationTime.Equal(time.UnixMilli(1700000000000)) || j.PayloadClass != "com.example.Details" ||
		compact(j.Payload) != `{"desc":"hi","n":3}` || j.URI != "http://foo.com:8080" || j.Node.Session != sessionOf(r.javaClient) {
		t.Errorf("Java's instance: %+v", j)
	}

	table = e.run(t, "services", "api", "--base", r.base).stdout
	t.Logf("gocurator services api:\n%s", table)
	for _, want := range []string{
		r.base + "/api  service api (3 instances)",
		"ID         ADDRESS   PORT  SSL   TYPE     ENABLED  REGISTERED",
		"go-1       10.0.0.2  9090  9443  DYNAMIC  false    " + r.dynamic.RegistrationTime.Format("2006-01-02 15:04:05"),
		"java-1     10.0.0.1  8080  -     DYNAMIC  true     2023-11-14 22:13:20 (",
		sessionOf(r.javaClient) + "  com.example.Details {\"desc\":\"hi\",\"n\":3}",
		"uri: java-1: http://foo.com:8080",
		r.base + "/api/secret: zk: not authenticated",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}

	// With the credentials, the refused node is listed too.
	reg = registryOf(t, e.run(t, "services", "api", "--base", r.base, "--json", "--auth", "digest:ops:s3cret"))
	if len(reg.Services[0].Instances) != 4 || !slices.Equal(unreadable(reg), wantBad[:1]) {
		t.Errorf("with --auth: %d instances, unreadable %v", len(reg.Services[0].Instances), unreadable(reg))
	}

	// An instance gone is gone from the listing.
	if err := r.javaClient.Close(); err != nil {
		t.Fatal(err)
	}
	res = e.ok(t, "services", "api", "--base", r.base, "--json")
	var ids []string
	for _, in := range registryOf(t, res).Services[0].Instances {
		ids = append(ids, in.ID)
	}
	if !slices.Equal(ids, []string{"go-1", "go-static"}) {
		t.Errorf("after the Java session closed: %v (exit %d)", ids, res.code)
	}
}

// inspect sees a registry's service as one, with its instances, not as
// the double barrier or group its ephemeral children would make.
func testInspectService(t *testing.T, e *env) {
	r := newRegistry(t, e)
	ctx := testenv.Ctx(t, testTimeout)
	for _, id := range []string{"garbage", "secret"} { // a service of instances only (a delete needs the parent's ACL only)
		if err := r.javaClient.Delete(ctx, r.base+"/api/"+id); err != nil {
			t.Fatal(err)
		}
	}
	s := e.snapshot(t, r.base)
	rec := recipeAt(t, s, r.base+"/api", inspect.KindService)
	var ids []string
	for _, in := range rec.Instances {
		ids = append(ids, in.ID)
	}
	if !slices.Equal(ids, []string{"go-1", "go-static", "java-1"}) || len(s.Recipes) != 2 {
		t.Fatalf("instances %v; recipes %+v", ids, s.Recipes)
	}
	recipeAt(t, s, r.base+"/web", inspect.KindService)
	table := e.ok(t, "inspect", r.base+"/api").stdout
	t.Logf("gocurator inspect %s/api:\n%s", r.base, table)
	for _, want := range []string{r.base + "/api  service (curator-x-discovery)  (3 instances)",
		"instance 1  go-1       " + sessionOf(r.goClient), "10.0.0.2:9090 ssl:9443 DYNAMIC disabled",
		"10.0.0.3:80 STATIC", "gocurator services --base " + r.base + " api"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

// A missing base path or service: exit 1, said so; bad arguments: exit 2.
func testServicesErrors(t *testing.T, e *env) {
	p := e.path(t)
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"services", "--base", p + "/none"}, 1, p + "/none does not exist"},
		{[]string{"services", "nope", "--base", p + "/none"}, 1, p + "/none/nope does not exist"},
		{[]string{"services", "a", "b"}, 2, "want 0 to 1 argument"},
		{[]string{"services", "a/b"}, 2, "not a service name"},
		{[]string{"services", "--base", "relative"}, 2, "--base"},
		{[]string{"services", "--base", "/a/"}, 2, "invalid path"},
		{[]string{"services", "--max-nodes", "0"}, 2, "--max-nodes"},
	} {
		r := e.run(t, tc.args...)
		where := r.stderr
		if tc.code == 0 {
			where = r.stdout
		}
		if r.code != tc.code || !strings.Contains(where, tc.out) {
			t.Errorf("gocurator %s: %s\nwant exit %d and %q", strings.Join(tc.args, " "), r, tc.code, tc.out)
		}
	}
	if r := gocurator(t, "", nil, "help", "services"); r.code != 0 || !strings.Contains(r.stdout, "usage: gocurator services [flags] [NAME]") {
		t.Errorf("help services: %s", r)
	}
}
