package framework_test

import (
	"sync"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// go-zookeeper/zk#35 on real connections. go-zookeeper reads its
// c.lastZxid to set its watches again on each connection while the
// connection's receiving goroutine writes it: a race whenever it holds a
// watch then, which includes a watch it gained on that very connection
// before its loop goroutine got there (a new session too: the CI run of
// stop 24 caught it there). So it must hold none (wirewatch.go): each kind
// of watch is kept by the link, set again by it on each reconnection, and
// fires for a change made while the client was away.
func TestWatchesKeptWithoutGoZookeeper(t *testing.T) {
	px := startProxyFor(t)
	root := testenv.Uniq("wire")
	c := newClient(t, px.Addr(), framework.WithNamespace(root))
	other := newClient(t, testenv.Shared().Addr(), framework.WithNamespace(root))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	for _, p := range []string{"/changed", "/kept", "/parent", "/marked"} {
		if _, err := c.Create(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	_, _, changed, err := c.GetW(ctx, "/changed")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kept, err := c.GetW(ctx, "/kept")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kids, err := c.ChildrenW(ctx, "/parent")
	if err != nil {
		t.Fatal(err)
	}
	ok, _, created, err := c.ExistsW(ctx, "/later")
	if err != nil || ok {
		t.Fatalf("ExistsW(/later) = %v, %v", ok, err)
	}
	m, err := c.MarkNode(ctx, "/marked")
	if err != nil || !m.Intact() {
		t.Fatalf("a mark: %v, %v", m, err)
	}
	if n := framework.ZKWatchers(c); n != 0 {
		t.Fatalf("go-zookeeper holds %d watches", n)
	}

	px.Refuse(true)
	px.Drop()
	testenv.WaitFor(t, testenv.WaitLong, "disconnected", func() bool { return !c.Connected() })
	if _, err := other.Set(ctx, "/changed", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create(ctx, "/later", nil); err != nil {
		t.Fatal(err)
	}
	px.Refuse(false)
	for _, w := range []struct {
		name string
		w    *framework.Watch
		want framework.EventType
	}{{"/changed", changed, framework.EventNodeDataChanged}, {"/later", created, framework.EventNodeCreated}} {
		select {
		case ev := <-w.w.C():
			if ev.Type != w.want {
				t.Fatalf("%s: %v, want %v", w.name, ev.Type, w.want)
			}
		case <-ctx.Done():
			t.Fatalf("%s: the change made while disconnected never fired its watch", w.name)
		}
	}
	// The unchanged ones are set again on the new connection: they fire on
	// the next change.
	if _, err := other.Set(ctx, "/kept", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create(ctx, "/parent/x", nil); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]*framework.Watch{"/kept": kept, "/parent": kids} {
		select {
		case <-w.C():
		case <-ctx.Done():
			t.Fatalf("%s: the watch was lost with the connection", name)
		}
	}
	if n := framework.ZKWatchers(c); n != 0 {
		t.Fatalf("go-zookeeper holds %d watches", n)
	}
}

// Requests queued in go-zookeeper while it is disconnected are written on
// the next connection right behind its handshake, with the watches set
// again: every request is answered and a kept watch stays set.
func TestReconnectionsWithKeptWatchesRaceFree(t *testing.T) {
	px := startProxyFor(t)
	root := testenv.Uniq("gate")
	full := "/" + root + "/w"
	c := newClient(t, px.Addr(), framework.WithNamespace(root))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/w", nil); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW(ctx, "/w") // kept: set again on each connection
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for range 5 {
		px.Refuse(true)
		px.Drop()
		testenv.WaitFor(t, testenv.WaitLong, "disconnected", func() bool { return !c.Connected() })
		zc := framework.ZKConn(c)
		var wg sync.WaitGroup
		for range 4 { // requests queued in go-zookeeper, written first on the next connection
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, _, err := zc.Exists(full); err != nil {
					t.Error(err)
				}
			}()
		}
		px.Refuse(false)
		wg.Wait()
	}
	select {
	case ev := <-w.C():
		t.Fatalf("the kept watch fired: %v", ev)
	default:
	}
	if _, err := c.Set(ctx, "/w", []byte("x")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C():
	case <-ctx.Done():
		t.Fatal("the kept watch was lost over the reconnections")
	}
}
