package nodes_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/nodes"
	"github.com/gocurator/curator/testing/zktest"
)

// startMember makes and starts a GroupMember, closed at cleanup.
func startMember(t *testing.T, ctx context.Context, c *framework.Client, group, id string, payload []byte) *nodes.GroupMember {
	t.Helper()
	g, err := nodes.NewGroupMember(c, group, id, payload)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return g
}

// membersAre waits until g's Members are want.
func membersAre(t *testing.T, g *nodes.GroupMember, want map[string]string) {
	t.Helper()
	testenv.Eventually(t, testenv.WaitLong, g.ID()+"'s members", func() error {
		got := map[string]string{}
		for id, data := range g.Members() {
			got[id] = string(data)
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("%v, want %v", got, want)
		}
		return nil
	})
}

// expectEvent reads evs until want comes (earlier events of other kinds
// or members are skipped; one of the same member and a different kind
// fails: they come in order).
func expectEvent(t *testing.T, evs <-chan nodes.MemberEvent, want nodes.MemberEvent) {
	t.Helper()
	timer := time.NewTimer(testenv.WaitLong)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("events closed before %v %s", want.Type, want.ID)
			}
			if ev.ID != want.ID {
				continue
			}
			if ev.Type != want.Type || string(ev.Data) != string(want.Data) {
				t.Fatalf("event %v %s %q, want %v %s %q", ev.Type, ev.ID, ev.Data, want.Type, want.ID, want.Data)
			}
			return
		case <-timer.C:
			t.Fatalf("no %v %s within %v", want.Type, want.ID, testenv.WaitLong)
		}
	}
}

// recipeGoroutines counts the live goroutines started by the module's
// recipes.
func recipeGoroutines() int {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "created by github.com/gocurator/curator/recipes/")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Three members in three sessions see each other; a listener added before
// Start is told of every member; SetData is seen by the others, as an
// event; a member that closes leaves (its node gone), and Close leaves no
// goroutine behind.
func TestGroupMemberBasic(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	group := testenv.Path(t, "/group")
	reader := newClient(t, testenv.Shared().ConnectString())
	want := map[string]string{}
	var ms []*nodes.GroupMember
	for _, id := range []string{"a", "b", "c"} {
		want[id] = "p-" + id
		ms = append(ms, startMember(t, ctx, newClient(t, testenv.Shared().ConnectString()), group, id, []byte("p-"+id)))
	}
	// A fourth, listening from before its Start.
	var mu sync.Mutex
	joined := map[string]string{}
	d, err := nodes.NewGroupMember(newClient(t, testenv.Shared().ConnectString()), group, "d", []byte("p-d"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	d.AddListener(func(ev nodes.MemberEvent) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Type == nodes.MemberJoined {
			joined[ev.ID] = string(ev.Data)
		}
	})
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ms = append(ms, d)
	want["d"] = "p-d"
	for _, g := range ms {
		membersAre(t, g, want)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the listener told of every member", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return maps.Equal(joined, want)
	})

	evs := ms[0].Events()
	if err := ms[1].SetData(ctx, []byte("p-b2")); err != nil {
		t.Fatal(err)
	}
	want["b"] = "p-b2"
	expectEvent(t, evs, nodes.MemberEvent{Type: nodes.MemberChanged, ID: "b", Data: []byte("p-b2")})
	for _, g := range ms {
		membersAre(t, g, want)
	}

	if err := ms[2].Close(); err != nil {
		t.Fatal(err)
	}
	delete(want, "c")
	expectEvent(t, evs, nodes.MemberEvent{Type: nodes.MemberLeft, ID: "c", Data: []byte("p-c")})
	if ok, _ := exists(t, reader, group+"/c"); ok {
		t.Error("c's node is there after its Close")
	}
	for _, g := range []*nodes.GroupMember{ms[0], ms[1], ms[3]} {
		membersAre(t, g, want)
	}

	for _, g := range ms {
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if kids := testenv.Children(t, reader, group); len(kids) != 0 {
		t.Errorf("members' nodes left after Close: %q", kids)
	}
	if n := recipeGoroutines(); n != 0 {
		t.Errorf("%d goroutines of the recipes left after Close", n)
	}
	for range evs { // closed by Close
	}
	if err := ms[0].Start(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	if err := ms[0].SetData(ctx, nil); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("SetData after Close: %v, want ErrClosed", err)
	}
	if _, ok := <-ms[1].Events(); ok {
		t.Error("Events first called after Close: not closed")
	}
}

// A member whose session expires leaves and comes back, in a new session
// (the others see it leave and join); it saw the group all along.
func TestGroupMemberSessionExpiry(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	cx := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
	reader := newClient(t, srv.ConnectString())
	group := testenv.Path(t, "/group")
	x := startMember(t, ctx, cx, group, "x", []byte("px"))
	y := startMember(t, ctx, newClient(t, srv.ConnectString()), group, "y", []byte("py"))
	want := map[string]string{"x": "px", "y": "py"}
	membersAre(t, y, want)
	evs := y.Events()
	old := cx.Session()
	if err := zktest.ExpireSession(ctx, px, srv, old.ID()); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, evs, nodes.MemberEvent{Type: nodes.MemberLeft, ID: "x", Data: []byte("px")})
	expectEvent(t, evs, nodes.MemberEvent{Type: nodes.MemberJoined, ID: "x", Data: []byte("px")})
	membersAre(t, x, want)
	membersAre(t, y, want)
	testenv.Eventually(t, testenv.WaitLong, "x's node in its new session", func() error {
		_, st, err := reader.Get(ctx, group+"/x")
		if err != nil {
			return err
		}
		if s := cx.Session(); s == nil || s == old || st.EphemeralOwner != s.ID() {
			return fmt.Errorf("owner 0x%x", st.EphemeralOwner)
		}
		return nil
	})
	if x.Err() != nil {
		t.Errorf("x's Err %v once back", x.Err())
	}
}

// An id already held by another live session is refused by Start with
// ErrLocked: the holder's node is neither adopted nor touched, and stays
// after the refused member's Close (Curator's two members flap).
func TestGroupMemberDuplicateID(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	reader := newClient(t, testenv.Shared().ConnectString())
	group := testenv.Path(t, "/group")
	first := newClient(t, testenv.Shared().ConnectString())
	a := startMember(t, ctx, first, group, "dup", []byte("first"))
	_, before, err := reader.Get(ctx, group+"/dup")
	if err != nil {
		t.Fatal(err)
	}
	b, err := nodes.NewGroupMember(newClient(t, testenv.Shared().ConnectString()), group, "dup", []byte("second"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	err = b.Start(ctx)
	if !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("Start with a taken id: %v, want ErrLocked", err)
	}
	if err := b.Start(ctx); !errors.Is(err, curator.ErrClosed) {
		t.Errorf("Start again after the refusal: %v, want ErrClosed (the member is closed)", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, after, err := reader.Get(ctx, group+"/dup")
	if err != nil || string(data) != "first" || after.Czxid != before.Czxid || after.Version != before.Version ||
		after.EphemeralOwner != first.Session().ID() {
		t.Fatalf("the holder's node: %q %+v, %v; want it as it was (%+v)", data, after, err, before)
	}
	membersAre(t, a, map[string]string{"dup": "first"})
	if a.Err() != nil {
		t.Errorf("the holder's Err: %v", a.Err())
	}
}

// Bad input is refused before any I/O with a typed error.
func TestGroupMemberBadInput(t *testing.T) {
	c := newClient(t, testenv.Shared().ConnectString())
	mk := func(path, id string, opts ...nodes.Option) func() error {
		return func() error { _, err := nodes.NewGroupMember(c, path, id, nil, opts...); return err }
	}
	for what, f := range map[string]func() error{
		"nil client": func() error { _, err := nodes.NewGroupMember(nil, "/g", "a", nil); return err },
		"/":          mk("/", "a"),
		"relative":   mk("g", "a"),
		"/zookeeper": mk("/zookeeper", "a"),
		"empty id":   mk("/g", ""),
		"id a/b":     mk("/g", "a/b"),
		"id ..":      mk("/g", ".."),
		"id \\x01":   mk("/g", "a\x01"),
		"WithMode":   mk("/g", "a", nodes.WithMode(framework.ModePersistent)),
		"WithTTL":    mk("/g", "a", nodes.WithTTL(time.Second)),
		"child name": mk("/g", "a", nodes.WithChildName("t")),
	} {
		if err := f(); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		}
	}
	g, err := nodes.NewGroupMember(c, testenv.Path(t, "/group"), "a", nil, nodes.WithoutParentCreation())
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil context is the bad input under test
	if err := g.Start(nil); !errors.Is(err, curator.ErrInvalidArgument) {
		t.Errorf("Start(nil ctx): %v", err)
	}
	if got := g.Members(); len(got) != 1 || string(got["a"]) != string(c.DefaultData()) {
		t.Errorf("Members before Start: %q, want only a, with the client's default data", got)
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close of a member never started: %v", err)
	}
}
