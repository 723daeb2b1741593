package main_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/semaphore"
)

// queue is a mutex held by one Go client with two more waiting, each in a
// session of its own.
type queue struct {
	path    string
	clients []*framework.Client
	mutexes []*locks.Mutex
	nodes   []string       // in queue order
	waits   []<-chan error // the waiters' Lock calls (nil for the holder)
}

// mutexQueue makes the queue at path: the holder, then two waiters, each
// queued once the one before it is.
func mutexQueue(t *testing.T, e *env, path string, opts ...locks.Option) *queue {
	t.Helper()
	ctx := testenv.Ctx(t, testTimeout)
	q := &queue{path: path}
	for i := 0; i < 3; i++ {
		c := newClient(t, e)
		on, node := enqueued()
		m, err := locks.NewMutex(c, path, append(slices.Clone(opts), locks.WithOnEnqueue(on))...)
		if err != nil {
			t.Fatal(err)
		}
		var wait <-chan error
		if i == 0 {
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			wait = async(func() error { return m.Lock(ctx) })
		}
		q.clients, q.mutexes, q.waits = append(q.clients, c), append(q.mutexes, m), append(q.waits, wait)
		q.nodes = append(q.nodes, node(t))
	}
	return q
}

// A mutex held by one Go process with two waiting: one recipe under the
// parent path, the holder and the waiters in queue order, each with its
// session, data and fencing token.
func testMutex(t *testing.T, e *env) {
	p := e.path(t)
	q := mutexQueue(t, e, p+"/orders")
	s := e.snapshot(t, p)
	if len(s.Recipes) != 1 || s.Path != p || len(s.Unreadable) != 0 || s.Truncated {
		t.Fatalf("snapshot %+v: want the mutex alone (%s holds it, and is not one itself)", s, p)
	}
	r := recipeAt(t, s, p+"/orders", inspect.KindMutex)
	if r.Label != "mutex (or LeaderSelector)" {
		t.Errorf("label %q", r.Label)
	}
	if got := paths(r.Holders); !slices.Equal(got, q.nodes[:1]) {
		t.Fatalf("holders %v, want %v", got, q.nodes[:1])
	}
	if got := paths(r.Waiters); !slices.Equal(got, q.nodes[1:]) {
		t.Fatalf("waiters %v, want %v in queue order", got, q.nodes[1:])
	}
	checkEntry(t, "holder", r.Holders[0], q.clients[0], q.nodes[0])
	for i, w := range r.Waiters {
		checkEntry(t, "waiter", w, q.clients[i+1], q.nodes[i+1])
		if w.Role != inspect.RoleWaiter || w.Position != i+1 {
			t.Errorf("waiter %d: role %s position %d", i+1, w.Role, w.Position)
		}
	}
	token, err := q.mutexes[0].FencingToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := r.Holders[0]
	if h.Token != token {
		t.Errorf("holder's token %d, its FencingToken %d", h.Token, token)
	}
	if want := string(q.clients[0].DefaultData()); h.Data != want || h.DataEncoding != "text" {
		t.Errorf("holder's data %q (%s), want the default %q", h.Data, h.DataEncoding, want)
	}
}

// The default output: an aligned table, the holder first, then the
// waiters in order.
func testMutexTable(t *testing.T, e *env) {
	p := e.path(t)
	q := mutexQueue(t, e, p)
	out := e.ok(t, "inspect", p).stdout
	t.Logf("gocurator inspect %s:\n%s", p, out)
	lines := strings.Split(out, "\n")
	find := func(sub string) int {
		for i, l := range lines {
			if strings.Contains(l, sub) {
				return i
			}
		}
		t.Fatalf("no line with %q in\n%s", sub, out)
		return -1
	}
	head := find("ROLE")
	if !strings.Contains(lines[head-1], p+"  mutex (or LeaderSelector)") {
		t.Errorf("no recipe title above the table:\n%s", out)
	}
	col := strings.Index(lines[head], "NODE")
	for i, role := range []string{"holder", "waiter 1", "waiter 2"} {
		l := lines[head+1+i]
		name := framework.NodeName(q.nodes[i])
		st := stat(t, q.clients[i], q.nodes[i])
		if !strings.HasPrefix(strings.TrimSpace(l), role+" ") || strings.Index(l, name) != col ||
			!strings.Contains(l, sessionOf(q.clients[i])) || !strings.Contains(l, inspect.SessionHex(st.Czxid)) {
			t.Errorf("row %d %q: want %s, %s in the NODE column, its session and token", i+1, l, role, name)
		}
	}
}

// A read-write lock: two readers hold, a writer waits behind them, and a
// reader queued behind the writer waits too.
func testReadWrite(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	var clients []*framework.Client
	var nodes []string
	for i, write := range []bool{false, false, true, false} {
		c := newClient(t, e)
		on, node := enqueued()
		rw, err := locks.NewReadWriteLock(c, p, locks.WithOnEnqueue(on))
		if err != nil {
			t.Fatal(err)
		}
		var half curator.Locker = rw.Read()
		if write {
			half = rw.Write()
		}
		if i < 2 {
			if err := half.Lock(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			async(func() error { return half.Lock(ctx) })
		}
		clients, nodes = append(clients, c), append(nodes, node(t))
	}
	r := recipeAt(t, e.snapshot(t, p), p, inspect.KindReadWrite)
	if got := paths(r.Holders); !slices.Equal(got, nodes[:2]) {
		t.Fatalf("holders %v, want the two readers %v", got, nodes[:2])
	}
	if got := paths(r.Waiters); !slices.Equal(got, nodes[2:]) {
		t.Fatalf("waiters %v, want the writer then the reader %v", got, nodes[2:])
	}
	all := append(slices.Clone(r.Holders), r.Waiters...)
	for i, want := range []string{"read", "read", "write", "read"} {
		if all[i].Mode != want {
			t.Errorf("node %d: mode %q, want %q", i, all[i].Mode, want)
		}
		checkEntry(t, "rw contender", all[i], clients[i], nodes[i])
	}
}

// A semaphore of 2: two leases granted, a third acquirer holding the
// internal lock while it waits for a lease, a fourth queued on that lock.
func testSemaphore(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	var clients []*framework.Client
	var leases []string
	for i := 0; i < 4; i++ {
		c := newClient(t, e)
		on, node := enqueued()
		s, err := semaphore.New(c, p, 2, semaphore.WithOnEnqueue(on))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		switch i {
		case 0, 1:
			if _, err := s.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
			leases = append(leases, node(t))
		case 2:
			async(func() error { _, err := s.Acquire(ctx); return err })
			leases = append(leases, node(t))
		case 3:
			async(func() error { _, err := s.Acquire(ctx); return err })
			var kids []string
			eventually(t, "the fourth acquirer queued on the internal lock", func() bool {
				kids, _, _ = c.Children(ctx, p+"/locks")
				return len(kids) == 2
			}, func() string { return strings.Join(kids, ",") })
		}
	}
	r := recipeAt(t, e.snapshot(t, p), p, inspect.KindSemaphore)
	if got := paths(r.Leases); !slices.Equal(got, leases) {
		t.Fatalf("leases %v, want %v in order", got, leases)
	}
	for i, l := range r.Leases {
		checkEntry(t, "lease", l, clients[i], leases[i])
		want := "granted"
		if i == 2 {
			want = "being acquired"
		}
		if len(l.Notes) != 1 || !strings.HasPrefix(l.Notes[0], want) {
			t.Errorf("lease %d: notes %v, want %q", i+1, l.Notes, want)
		}
	}
	if r.Lock == nil || r.Lock.Path != p+"/locks" || len(r.Lock.Holders) != 1 || len(r.Lock.Waiters) != 1 {
		t.Fatalf("internal lock %+v", r.Lock)
	}
	if h, w := r.Lock.Holders[0].Session, r.Lock.Waiters[0].Session; h != sessionOf(clients[2]) || w != sessionOf(clients[3]) {
		t.Errorf("internal lock held by %s, waited on by %s; want the third (%s) and the fourth (%s) acquirer",
			h, w, sessionOf(clients[2]), sessionOf(clients[3]))
	}
}

// A leader latch's layout (protected ephemeral-sequential "latch-" nodes,
// data the participant id): the lowest is the leader.
func testLeaderLatch(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	var clients []*framework.Client
	var nodes []string
	for i := 0; i < 3; i++ {
		c := newClient(t, e)
		n, err := c.Create(ctx, p+"/latch-", []byte("participant-"+string(rune('a'+i))),
			framework.WithMode(framework.ModeEphemeralSequential), framework.WithProtection(), framework.WithParentContainers())
		if err != nil {
			t.Fatal(err)
		}
		clients, nodes = append(clients, c), append(nodes, n)
	}
	r := recipeAt(t, e.snapshot(t, p), p, inspect.KindLeaderLatch)
	if got := paths(r.Holders); !slices.Equal(got, nodes[:1]) {
		t.Fatalf("leader %v, want %v", got, nodes[:1])
	}
	if got := paths(r.Waiters); !slices.Equal(got, nodes[1:]) {
		t.Fatalf("waiters %v, want %v", got, nodes[1:])
	}
	if r.Holders[0].Data != "participant-a" || r.Waiters[1].Data != "participant-c" {
		t.Errorf("participant ids %q, %q", r.Holders[0].Data, r.Waiters[1].Data)
	}
	checkEntry(t, "leader", r.Holders[0], clients[0], nodes[0])
	checkEntry(t, "follower", r.Waiters[1], clients[2], nodes[2])
}

// --namespace: paths are the namespace's, as the recipes' clients name them.
func testNamespace(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	ns := strings.TrimPrefix(e.path(t), "/cli/")
	c := newClient(t, e, framework.WithNamespace(ns))
	m, err := locks.NewMutex(c, "/orders")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	r := recipeAt(t, e.snapshot(t, "/orders", "--namespace", ns), "/orders", inspect.KindMutex)
	if got := paths(r.Holders); !slices.Equal(got, []string{m.Node()}) {
		t.Fatalf("holders %v, want %s", got, m.Node())
	}
	recipeAt(t, e.snapshot(t, "/"+ns), "/"+ns+"/orders", inspect.KindMutex)
}

// --connect defaults to $ZK_CONNECT.
func testConnectFromEnv(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	p := e.path(t)
	c := newClient(t, e)
	if _, err := c.Create(ctx, p, []byte("set"), framework.WithParents()); err != nil {
		t.Fatal(err)
	}
	r := gocurator(t, "", []string{"ZK_CONNECT=" + e.srv.ConnectString()}, "inspect", p)
	if r.code != 0 || !strings.Contains(r.stdout, p+"  barrier or plain node") {
		t.Fatalf("inspect with ZK_CONNECT set and no --connect: %s", r)
	}
}
