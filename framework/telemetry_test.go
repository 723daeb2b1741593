package framework_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/telemetry/telemetrytest"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

var (
	zkSystem = telemetry.KeyDBSystemName.String("zookeeper")
	opName   = telemetry.KeyDBOperation.String
)

// Every attempt on the wire is one sample of db.client.operation.duration
// and one CLIENT span, named after ZooKeeper's request, with
// db.system.name=zookeeper, the server, the namespace, and on failure
// error.type and ZooKeeper's code; znode paths only on spans, and only when
// asked for.
func TestTelemetryOperations(t *testing.T) {
	for _, paths := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "WithPathAttributes"}[paths], func(t *testing.T) {
			rig := telemetrytest.New(t)
			ns := testenv.Uniq("telemetry")
			opts := rig.Options(framework.WithNamespace(ns))
			if paths {
				opts = append(opts, framework.WithPathAttributes())
			}
			c := newClient(t, testenv.Shared().ConnectString(), opts...)
			ctx := testenv.Ctx(t, testenv.WaitShort)
			if _, err := c.Create(ctx, "/a", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Get(ctx, "/a"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Get(ctx, "/missing"); !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("Get of a missing node: %v", err)
			}
			if _, err := c.Set(ctx, "/a", []byte("y")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Children(ctx, "/"); err != nil {
				t.Fatal(err)
			}

			const dur = telemetry.MetricOpDuration
			if n := rig.Count(t, dur, zkSystem, opName("getData")); n != 2 {
				t.Fatalf("getData samples: %d, want 2: %v", n, rig.Points(t, dur))
			}
			if n := rig.Count(t, dur, zkSystem, opName("getData"), telemetry.KeyErrorType.String("NONODE"),
				telemetry.KeyDBStatusCode.String("-101")); n != 1 {
				t.Fatalf("getData NONODE samples: %d, want 1: %v", n, rig.Points(t, dur))
			}
			for _, op := range []string{"create", "setData", "getChildren"} {
				if n := rig.Count(t, dur, zkSystem, opName(op)); n < 1 {
					t.Fatalf("no %s sample: %v", op, rig.Points(t, dur))
				}
			}
			for _, p := range rig.Points(t, dur) {
				if !p.Match(zkSystem, telemetry.KeyDBNamespace.String("/"+ns), telemetry.KeyServerAddress.String("127.0.0.1")) ||
					!p.Attrs.HasValue(telemetry.KeyServerPort) {
					t.Fatalf("sample without the system, namespace or server: %v", p)
				}
				if p.Attrs.HasValue(telemetry.KeyZnodePath) {
					t.Fatalf("a znode path on a metric: %v", p)
				}
				if op, _ := p.Attrs.Value(telemetry.KeyDBOperation); op.AsString() == "getData" && !p.Attrs.HasValue(telemetry.KeyErrorType) {
					if p.Attrs.HasValue(telemetry.KeyDBStatusCode) {
						t.Fatalf("a status code on a success: %v", p)
					}
				}
			}

			spans := rig.Ended("getData")
			if len(spans) != 2 {
				t.Fatalf("getData spans: %s", telemetrytest.Names(rig.Ended("")))
			}
			failed := 0
			for _, s := range spans {
				if s.SpanKind != trace.SpanKindClient {
					t.Fatalf("span kind %v, want client", s.SpanKind)
				}
				if _, ok := telemetrytest.Attr(s, telemetry.KeySessionID); !ok {
					t.Fatalf("span without zookeeper.session.id: %v", s.Attributes)
				}
				path, ok := telemetrytest.Attr(s, telemetry.KeyZnodePath)
				if ok != paths || (ok && path.AsString() != "/a" && path.AsString() != "/missing") {
					t.Fatalf("zookeeper.path %v (%v) with path attributes %v", path.AsString(), ok, paths)
				}
				if s.Status.Code == codes.Error {
					failed++
					if v, _ := telemetrytest.Attr(s, telemetry.KeyErrorType); v.AsString() != "NONODE" {
						t.Fatalf("failed span's error.type %q", v.AsString())
					}
				}
			}
			if failed != 1 {
				t.Fatalf("%d failed getData spans, want 1", failed)
			}
		})
	}
}

// A transaction with a create is not sent again after a lost response: the
// attempt refused (it made no request) ends its span all the same, and only
// the attempt on the wire is a duration sample.
func TestTelemetryMultiNotResent(t *testing.T) {
	rig := telemetrytest.New(t)
	p := startProxyFor(t)
	c, log := newRecordedClient(t, p.Addr(), rig.Options(framework.WithNamespace(testenv.Uniq("telemetry")),
		framework.WithSessionTimeout(10*time.Second))...)
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/data", nil); err != nil { // the namespace made before the drop
		t.Fatal(err)
	}

	p.DropAfterRequest(1)
	if _, err := c.Multi(ctx, framework.CreateOp{Path: "/made"}); !errors.Is(err, curator.ErrConnectionLoss) {
		t.Fatalf("multi with a create across a lost response: %v, want ErrConnectionLoss", err)
	}
	if spans := rig.Ended("multi"); len(spans) != 2 {
		t.Fatalf("ended multi spans: %d, want 2 (the lost attempt and the refused one): %s",
			len(spans), telemetrytest.Names(rig.Ended("")))
	}
	const dur = telemetry.MetricOpDuration
	if n := rig.Count(t, dur, zkSystem, opName("multi")); n != 1 {
		t.Fatalf("multi samples: %d, want 1 (the attempt on the wire): %v", n, rig.Points(t, dur))
	}
}

// The server expires the session (the client's own expiry timers never
// fire here): one expiration from the server, and the states in order.
func TestTelemetryServerExpiry(t *testing.T) {
	_, restore := framework.CaptureExpiryTimers() // armed, never fired
	testenv.RestoreLater(t)(restore)              // after the clients are closed
	srv := testenv.Shared()
	p := startProxyFor(t)
	rig := telemetrytest.New(t)
	c, log := newRecordedClient(t, p.Addr(), rig.Options()...)
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	const tr = telemetry.MetricTransitions
	state := telemetry.KeySessionState.String
	rig.WaitSum(t, testenv.WaitShort, 1, tr, state("connected"))
	if err := zktest.ExpireSession(testenv.Ctx(t, testenv.WaitLong), p, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	log.wait(t, testenv.WaitLong, framework.StateConnected, framework.StateSuspended, framework.StateLost, framework.StateReconnected)
	rig.WaitSum(t, testenv.WaitShort, 1, telemetry.MetricExpirations, telemetry.KeyExpirySource.String("server"))
	if n := rig.Sum(t, telemetry.MetricExpirations); n != 1 {
		t.Fatalf("expirations: %d, want 1: %v", n, rig.Points(t, telemetry.MetricExpirations))
	}
	for _, s := range []string{"suspended", "lost", "reconnected"} {
		if n := rig.Sum(t, tr, state(s)); n != 1 {
			t.Fatalf("%s transitions: %d, want 1: %v", s, n, rig.Points(t, tr))
		}
	}
}

// The client declares the session lost after the session timeout spent
// disconnected (its expiry timer fired by hand): a simulated expiration.
func TestTelemetrySimulatedExpiry(t *testing.T) {
	fired, restore := framework.CaptureExpiryTimers()
	testenv.RestoreLater(t)(restore) // after the clients are closed
	p := startProxyFor(t)
	rig := telemetrytest.New(t)
	_, log := newRecordedClient(t, p.Addr(), rig.Options()...)
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	p.Refuse(true)
	p.Drop()
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended)
	var expire func()
	select {
	case expire = <-fired:
	case <-testenv.Ctx(t, testenv.WaitShort).Done():
		t.Fatal("no expiry timer armed")
	}
	expire()
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateLost)
	p.Heal()
	log.wait(t, testenv.WaitLong, framework.StateConnected, framework.StateSuspended, framework.StateLost, framework.StateReconnected)
	rig.WaitSum(t, testenv.WaitShort, 1, telemetry.MetricExpirations, telemetry.KeyExpirySource.String("simulated"))
	if n := rig.Sum(t, telemetry.MetricExpirations); n != 1 {
		t.Fatalf("expirations: %d, want 1: %v", n, rig.Points(t, telemetry.MetricExpirations))
	}
}

// A guaranteed delete that cannot be done now counts as pending until it is
// done; one abandoned by Close stops counting.
func TestTelemetryPendingDelete(t *testing.T) {
	p := startProxyFor(t)
	rig := telemetrytest.New(t)
	ns := testenv.Uniq("pending")
	c := newClient(t, p.Addr(), rig.Options(framework.WithNamespace(ns))...)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	for _, n := range []string{"/a", "/b"} {
		if _, err := c.Create(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	const pending = telemetry.MetricPendingDelete
	if n := rig.Sum(t, pending); n != 0 {
		t.Fatalf("pending deletes before any: %d", n)
	}
	p.Refuse(true)
	p.Drop()
	d := c.DeleteInBackground("/a")
	if n := rig.Sum(t, pending); n != 1 { // cannot be done while disconnected
		t.Fatalf("pending deletes while disconnected: %d, want 1", n)
	}
	p.Heal()
	if err := d.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	rig.WaitSum(t, testenv.WaitShort, 0, pending)

	p.Refuse(true)
	p.Drop()
	d = c.DeleteInBackground("/b")
	rig.WaitSum(t, testenv.WaitShort, 1, pending)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Fatalf("a delete abandoned by Close: %v", err)
	}
	rig.WaitSum(t, testenv.WaitShort, 0, pending)
}

// Without a provider (the defaults: OpenTelemetry's globals, which nobody
// set) the client works and no option is needed; nil providers are refused.
func TestTelemetryOptions(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("noprovider")))
	if _, err := c.Create(testenv.Ctx(t, testenv.WaitShort), "/x", nil); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []framework.Option{framework.WithMeterProvider(nil), framework.WithTracerProvider(nil)} {
		if _, err := framework.New(testenv.Shared().ConnectString(), opt); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Fatalf("a nil provider: %v, want ErrInvalidArgument", err)
		}
	}
}
