package inspect

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/discovery"
)

// javaInstance is what Curator 5.4's JsonInstanceSerializer wrote for an
// instance in compatible mode (discovery/instance_test.go's curatorBytes),
// with the id given.
func javaInstance(id string) string {
	return `{"name":"svc","id":"` + id + `","address":"10.0.0.1","port":8080,"sslPort":null,"payload":null,"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://foo.com:","variable":false},{"value":"port","variable":true}]}}`
}

// goInstance is what discovery.Instance writes.
func goInstance(t *testing.T, in discovery.Instance[map[string]string]) string {
	t.Helper()
	b, err := in.Marshal(discovery.WithEnabled)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A service's instances (Java's bytes, Go's, a STATIC one's persistent
// node, a DYNAMIC_SEQUENTIAL one's sequence suffix) are one service with
// its instances, not the double barrier their UUID names alone would make.
func TestServiceRecognized(t *testing.T) {
	f := newFake()
	now := time.Now().UnixMilli()
	java, goID, static, seq := uuid(1), uuid(2), "static-1", "seq-1"
	f.add("/services/svc/"+java, javaInstance(java), 0x11, now-1000)
	f.add("/services/svc/"+goID, goInstance(t, discovery.Instance[map[string]string]{Name: "svc", ID: goID, Address: "10.0.0.2",
		Port: 9090, SSLPort: 9443, Payload: map[string]string{"zone": "eu"}, PayloadClass: "java.util.HashMap",
		RegistrationTime: time.UnixMilli(now), Disabled: true}), 0x22, now-500)
	f.add("/services/svc/"+static, goInstance(t, discovery.Instance[map[string]string]{Name: "svc", ID: static, ServiceType: discovery.Static}), 0, now-100)
	f.add("/services/svc/"+seq+"0000000007", goInstance(t, discovery.Instance[map[string]string]{Name: "svc", ID: seq, ServiceType: discovery.DynamicSequential}), 0x33, now)
	s := take(t, f, "/services", Options{})
	r := only(t, s, "/services/svc")
	if r.Kind != KindService || r.Label != "service (curator-x-discovery)" || len(s.Recipes) != 1 {
		t.Fatalf("recipes %v, kind %s %q", kinds(s), r.Kind, r.Label)
	}
	var ids []string
	for i, in := range r.Instances {
		ids = append(ids, in.ID)
		if in.Node.Role != RoleInstance || in.Node.Position != i+1 || in.Name != "svc" {
			t.Errorf("instance %s: role %s position %d name %q", in.ID, in.Node.Role, in.Node.Position, in.Name)
		}
	}
	if want := []string{java, goID, seq, static}; !slices.Equal(ids, want) { // by node name
		t.Fatalf("instances %v, want %v", ids, want)
	}
	j, g, st := r.Instances[0], r.Instances[1], r.Instances[3]
	if j.Address != "10.0.0.1" || j.Port != 8080 || j.SSLPort != 0 || !j.Enabled || j.ServiceType != "DYNAMIC" ||
		!j.RegistrationTime.Equal(time.UnixMilli(1700000000000)) || string(j.Payload) != "null" ||
		j.URI != "http://foo.com:8080" || j.Node.Session != "0x11" {
		t.Errorf("Java's instance: %+v", j)
	}
	if g.Enabled || g.SSLPort != 9443 || string(g.Payload) != `{"zone":"eu"}` || g.PayloadClass != "java.util.HashMap" || g.Node.Session != "0x22" {
		t.Errorf("Go's instance: %+v", g)
	}
	if st.ServiceType != "STATIC" || st.Node.Session != "0x0" || !st.RegistrationTime.IsZero() {
		t.Errorf("the STATIC instance: %+v", st)
	}
}

// Children whose data is no instance of theirs (not JSON, JSON of another
// id) leave the node to the other rules: UUID-named ephemerals are a
// double barrier's members, others a group.
func TestServiceNeedsInstances(t *testing.T) {
	f := newFake()
	f.add("/a/b/"+uuid(1), javaInstance(uuid(1)), 0x11, 1)
	f.add("/a/b/"+uuid(2), "10.0.0.2:8080", 0x22, 2)
	f.add("/a/g/w1", javaInstance("w1"), 0x11, 1)
	f.add("/a/g/w2", javaInstance("another-id"), 0x22, 2)
	f.add("/a/g2/w1", `{}`, 0x11, 1)
	s := take(t, f, "/a", Options{})
	if k := only(t, s, "/a/b").Kind; k != KindDoubleBarrier {
		t.Errorf("/a/b: %s, want double-barrier", k)
	}
	for _, p := range []string{"/a/g", "/a/g2"} {
		if k := only(t, s, p).Kind; k != KindGroup {
			t.Errorf("%s: %s, want group", p, k)
		}
	}
}

// ReadRegistry lists every service and its instances; a node whose bytes
// are no instance and one that may not be read are listed as unreadable,
// the rest still listed.
func TestReadRegistry(t *testing.T) {
	f := newFake()
	f.add("/reg/api/a", javaInstance("a"), 0x11, 1)
	f.add("/reg/api/bad", "not json", 0x11, 1)
	f.add("/reg/api/denied", javaInstance("denied"), 0x11, 1).noAuth = true
	f.add("/reg/api/odd", javaInstance("other"), 0x11, 1)
	f.add("/reg/web/w", javaInstance("w"), 0, 1)
	f.add("/reg/secret/x", javaInstance("x"), 0, 1)
	f.nodes["/reg/secret"].noAuth = true
	ctx := context.Background()
	reg, err := ReadRegistry(ctx, f, "/reg", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range reg.Services {
		var ids []string
		for _, in := range s.Instances {
			ids = append(ids, in.ID)
		}
		got = append(got, s.Name+"="+strings.Join(ids, ",")+map[bool]string{true: "?"}[s.Unread])
	}
	if want := []string{"api=a,other", "secret=?", "web=w"}; !slices.Equal(got, want) {
		t.Errorf("services %v, want %v", got, want)
	}
	var bad []string
	for _, p := range reg.Unreadable {
		bad = append(bad, p.Path)
	}
	if want := []string{"/reg/api/bad", "/reg/api/denied", "/reg/secret"}; !slices.Equal(bad, want) {
		t.Errorf("unreadable %v, want %v", bad, want)
	}
	if odd := reg.Services[0].Instances[1]; len(odd.Node.Notes) != 2 {
		t.Errorf("an instance at another id's node, of another service: notes %q", odd.Node.Notes)
	}

	one, err := ReadRegistry(ctx, f, "/reg", "web", Options{})
	if err != nil || len(one.Services) != 1 || one.Services[0].Path != "/reg/web" || len(one.Services[0].Instances) != 1 {
		t.Fatalf("the service web alone: %+v, %v", one, err)
	}
	if _, err := ReadRegistry(ctx, f, "/reg", "nope", Options{}); !IsNotFound(err) {
		t.Errorf("a missing service: %v, want IsNotFound", err)
	}

	// A registry at the root: the server's own /zookeeper skipped.
	f.add("/zookeeper/quota", "", 0, 0)
	root, err := ReadRegistry(ctx, f, "/", "", Options{Skip: []string{"/zookeeper"}})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, s := range root.Services {
		all = append(all, s.Name)
	}
	if !slices.Equal(all, []string{"reg"}) {
		t.Errorf("services at the root: %v, want [reg]", all)
	}
}
