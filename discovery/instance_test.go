package discovery_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/discovery"
)

// curatorBytes is what Curator 5.4's JsonInstanceSerializer wrote for this
// instance in compatible mode (../shared/docs/curator-catalog.md §4.2,
// taken from the Debian jars).
const curatorBytes = `{"name":"svc","id":"id-1","address":"10.0.0.1","port":8080,"sslPort":null,"payload":null,"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://foo.com:","variable":false},{"value":"port","variable":true}]}}`

func TestInstanceBytesAreCurators(t *testing.T) {
	spec, err := discovery.ParseURISpec("{scheme}://foo.com:{port}")
	if err != nil {
		t.Fatal(err)
	}
	in := discovery.Instance[any]{Name: "svc", ID: "id-1", Address: "10.0.0.1", Port: 8080,
		RegistrationTime: time.UnixMilli(1700000000000), ServiceType: discovery.Dynamic, URISpec: spec}
	got, err := in.Marshal(discovery.Compatible)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != curatorBytes {
		t.Errorf("compatible mode:\n got %s\nwant %s", got, curatorBytes)
	}
	got, err = in.Marshal(discovery.WithEnabled)
	if err != nil {
		t.Fatal(err)
	}
	if want := curatorBytes[:len(curatorBytes)-1] + `,"enabled":true}`; string(got) != want {
		t.Errorf("with enabled:\n got %s\nwant %s", got, want)
	}

	var back discovery.Instance[any]
	if err := back.Unmarshal([]byte(curatorBytes)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, discovery.Instance[any]{Name: "svc", ID: "id-1", Address: "10.0.0.1", Port: 8080,
		RegistrationTime: time.UnixMilli(1700000000000).UTC(), ServiceType: discovery.Dynamic, URISpec: spec}) {
		t.Errorf("read back: %+v", back)
	}
	if uri := back.URI(); uri != "http://foo.com:8080" {
		t.Errorf("URI %q", uri)
	}
}

type details struct {
	Desc string `json:"desc"`
	N    int    `json:"n"`
}

// Jackson's type information (@JsonTypeInfo(use=CLASS) on the payload):
// the forms Curator writes for each kind of payload (§4.2's table) are read
// into T, their class kept and written back as it was.
func TestPayloadForms(t *testing.T) {
	for _, tc := range []struct {
		name, payload, class string
		read                 func(raw string) (any, error)
		want                 any
	}{
		{"null", `null`, "", readAs[*details], (*details)(nil)},
		{"string", `"strpayload"`, "", readAs[string], "strpayload"},
		{"integer", `42`, "", readAs[int], 42},
		{"POJO", `{"@class":"com.example.Details","desc":"hi","n":3}`, "com.example.Details", readAs[details], details{"hi", 3}},
		{"map", `{"@class":"java.util.HashMap","k":"v"}`, "java.util.HashMap", readAs[map[string]string], map[string]string{"k": "v"}},
		{"list", `["java.util.Arrays$ArrayList",["a","b"]]`, "java.util.Arrays$ArrayList", readAs[[]string], []string{"a", "b"}},
		{"long", `["java.lang.Long",5]`, "java.lang.Long", readAs[int64], int64(5)},
		{"int array", `["[I",[1,2]]`, "[I", readAs[[]int], []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read(tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("payload %s: got %#v, want %#v", tc.payload, got, tc.want)
			}
		})
	}
}

// readAs reads an instance whose payload is raw into Instance[P], checks
// that writing it back gives the same bytes, and returns the payload.
func readAs[P any](raw string) (any, error) {
	data := `{"name":"s","id":"i","address":null,"port":null,"sslPort":null,"payload":` + raw +
		`,"registrationTimeUTC":0,"serviceType":"STATIC","uriSpec":null,"enabled":false}`
	var in discovery.Instance[P]
	if err := in.Unmarshal([]byte(data)); err != nil {
		return nil, err
	}
	if !in.Disabled || in.ServiceType != discovery.Static {
		return nil, errors.New("enabled or serviceType not read")
	}
	back, err := in.Marshal(discovery.WithEnabled)
	if err != nil {
		return nil, err
	}
	if string(back) != data {
		return nil, errors.New("written back differently:\n" + string(back) + "\n" + data)
	}
	return in.Payload, nil
}

// A Go payload is written in the form a Java reader can read: a slice in
// Jackson's wrapper array, an object with the @class the caller names.
func TestGoPayloadWrittenForJava(t *testing.T) {
	in := discovery.Instance[[]string]{Name: "s", ID: "i", Payload: []string{"a"}}
	b, err := in.Marshal(discovery.Compatible)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"s","id":"i","address":null,"port":null,"sslPort":null,"payload":["java.util.ArrayList",["a"]],"registrationTimeUTC":0,"serviceType":"DYNAMIC","uriSpec":null}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	pojo := discovery.Instance[details]{Name: "s", ID: "i", Payload: details{"x", 1}, PayloadClass: "com.example.Details"}
	b, err = pojo.Marshal(discovery.Compatible)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"payload":{"@class":"com.example.Details","desc":"x","n":1}`; !strings.Contains(string(b), want) {
		t.Errorf("got %s, want it to contain %s", b, want)
	}
	html := discovery.Instance[string]{Name: "s", ID: "i", Payload: "<a&b>"}
	if b, _ := html.Marshal(discovery.Compatible); !strings.Contains(string(b), `"payload":"<a&b>"`) {
		t.Errorf("escaped like HTML, not as Jackson writes: %s", b)
	}
}

// Fields a later Curator writes are kept and written back; missing ones
// take Curator's defaults.
func TestUnknownAndMissingFields(t *testing.T) {
	data := `{"name":"s","id":"i","future":{"x":[1,2]},"weight":3}`
	var in discovery.Instance[any]
	if err := in.Unmarshal([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if in.ServiceType != discovery.Dynamic || in.Disabled {
		t.Errorf("defaults: %+v", in)
	}
	b, err := in.Marshal(discovery.Compatible)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"s","id":"i","address":null,"port":null,"sslPort":null,"payload":null,"registrationTimeUTC":0,"serviceType":"DYNAMIC","uriSpec":null,"future":{"x":[1,2]},"weight":3}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestUnreadableInstances(t *testing.T) {
	for name, data := range map[string]string{
		"empty":                   ``,
		"not an object":           `[1]`,
		"unknown service type":    `{"name":"s","serviceType":"ELASTIC"}`,
		"payload of another type": `{"name":"s","payload":"text"}`,
		"truncated":               `{"name":"s",`,
		"port not a number":       `{"port":"80"}`,
	} {
		var in discovery.Instance[int]
		if err := in.Unmarshal([]byte(data)); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}

func TestURISpec(t *testing.T) {
	in := &discovery.Instance[any]{Name: "n", ID: "i", Address: "h", Port: 80, SSLPort: 443,
		ServiceType: discovery.Permanent, RegistrationTime: time.UnixMilli(5)}
	for tmpl, want := range map[string]string{
		"{scheme}://{address}:{port}/x":                    "https://h:80/x", // the plain port, even with SSL (Curator)
		"{ scheme }-{ssl-port}-{service-type}-{name}/{id}": "https-443-permanent-n/i",
		"{[}x{]}":                           "{x}",
		"{registration-time-utc}{unknown}.": "5.",
		"{greeting}":                        "hello",
	} {
		u, err := discovery.ParseURISpec(tmpl)
		if err != nil {
			t.Fatalf("%q: %v", tmpl, err)
		}
		if got := discovery.Build(u, in, map[string]string{"greeting": "hello"}); got != want {
			t.Errorf("%q: got %q, want %q", tmpl, got, want)
		}
	}
	for _, bad := range []string{"{a{b}}", "a}b", "{open"} {
		if _, err := discovery.ParseURISpec(bad); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%q: %v, want ErrInvalidArgument", bad, err)
		}
	}
}
