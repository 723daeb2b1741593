package framework_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// A guarded write (check + set in one Multi) is done while the guard node
// exists and refused, with nothing written, once it is gone.
func TestMultiGuardedWrite(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(testenv.Uniq("multi")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	if _, err := c.Create(ctx, "/guard", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/data", []byte("v0")); err != nil {
		t.Fatal(err)
	}
	guarded := func(v string) ([]framework.OpResult, error) {
		return c.Multi(ctx,
			framework.CheckOp{Path: "/guard", Version: -1},
			framework.SetDataOp{Path: "/data", Data: []byte(v), Version: -1})
	}

	res, err := guarded("v1")
	if err != nil {
		t.Fatalf("guarded write with the guard present: %v", err)
	}
	if len(res) != 2 || res[1].Stat == nil || res[1].Stat.Version != 1 {
		t.Fatalf("results %+v", res)
	}
	if d, _, _ := c.Get(ctx, "/data"); string(d) != "v1" {
		t.Fatalf("data %q, want v1", d)
	}

	// A version guard too.
	if _, err := c.Multi(ctx,
		framework.CheckOp{Path: "/guard", Version: 5},
		framework.SetDataOp{Path: "/data", Data: []byte("bad"), Version: -1}); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("guard with a wrong version: %v, want ErrBadVersion", err)
	}

	if err := c.Delete(ctx, "/guard"); err != nil {
		t.Fatal(err)
	}
	res, err = guarded("v2")
	if !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("guarded write without the guard: %v, want ErrNoNode", err)
	}
	if len(res) != 2 || !errors.Is(res[0].Err, zk.ErrNoNode) {
		t.Fatalf("results %+v: the check should have failed with ErrNoNode", res)
	}
	if d, st, _ := c.Get(ctx, "/data"); string(d) != "v1" || st.Version != 1 {
		t.Fatalf("data %q version %d after a refused transaction, want v1 / 1", d, st.Version)
	}

	// All or nothing: a create and a failing op leave no node.
	if _, err := c.Multi(ctx,
		framework.CreateOp{Path: "/new", Data: []byte("n")},
		framework.DeleteOp{Path: "/absent", Version: -1}); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("multi with a failing delete: %v, want ErrNoNode", err)
	}
	if ok, _, _ := c.Exists(ctx, "/new"); ok {
		t.Fatal("a failed transaction created /new")
	}
}

// Across a lost response, a transaction without creates is retried (it is
// idempotent) and succeeds; one with a create is not retried (a retry
// could not tell its own success from a conflict): the caller gets
// ErrConnectionLoss, and the transaction did happen.
func TestMultiLostResponse(t *testing.T) {
	p := startProxyFor(t)
	ns := testenv.Uniq("multi")
	c, log := newRecordedClient(t, p.Addr(), framework.WithNamespace(ns),
		framework.WithSessionTimeout(10*time.Second))
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	observer := newClient(t, testenv.Shared().ConnectString(), framework.WithNamespace(ns))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/data", []byte("v0")); err != nil {
		t.Fatal(err)
	}

	p.DropAfterRequest(1)
	res, err := c.Multi(ctx,
		framework.CheckOp{Path: "/data", Version: -1},
		framework.SetDataOp{Path: "/data", Data: []byte("v1"), Version: -1})
	if err != nil || len(res) != 2 {
		t.Fatalf("idempotent multi across a lost response = %+v, %v", res, err)
	}
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateReconnected)
	if d, _, _ := observer.Get(ctx, "/data"); string(d) != "v1" {
		t.Fatalf("data %q, want v1", d)
	}

	p.DropAfterRequest(1)
	_, err = c.Multi(ctx,
		framework.CreateOp{Path: "/made", Data: []byte("m")},
		framework.SetDataOp{Path: "/data", Data: []byte("v2"), Version: -1})
	if !errors.Is(err, curator.ErrConnectionLoss) {
		t.Fatalf("multi with a create across a lost response: %v, want ErrConnectionLoss", err)
	}
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateReconnected,
		framework.StateSuspended, framework.StateReconnected)
	if d, _, err := observer.Get(ctx, "/made"); err != nil || string(d) != "m" {
		t.Fatalf("/made = %q, %v; the transaction reached the server", d, err)
	}
	if d, _, _ := observer.Get(ctx, "/data"); string(d) != "v2" {
		t.Fatalf("data %q, want v2", d)
	}
}
