package cache_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/cache"
	"github.com/gocurator/curator/retry"
	"github.com/gocurator/curator/testing/zktest"
)

// The convergence contract under faults (issue 40; the catalog's §7.1):
// random churn from three other sessions while the cache's connection is
// partitioned, its server restarted, or its ensemble's leader killed;
// once the churn stops, the cache and a map built from its events alone
// equal a bare client's recursive read, no node's events went back,
// exactly one Rebuilt came per session loss and none for a reconnect, the
// server holds one data and one child watch per cached node, and after
// Close no goroutine of the cache is left and no event comes.

// churner makes random creates, sets and deletes under root, at depths 1
// to 3 over a few names, from sessions of its own, until stopped.
type churner struct {
	ops  atomic.Int64
	done chan struct{}
	wg   sync.WaitGroup
}

// startChurn starts w sessions on connect churning under root; each makes
// at least n changes, and more until stop.
func startChurn(t *testing.T, ctx context.Context, connect, root string, w, n int) *churner {
	t.Helper()
	ch := &churner{done: make(chan struct{})}
	names := []string{"a", "b", "c"}
	for j := range w {
		cl := newClient(t, connect)
		ch.wg.Add(1)
		go func() {
			defer ch.wg.Done()
			r := rand.New(rand.NewPCG(uint64(j), uint64(time.Now().UnixNano())))
			for i := 0; ; i++ {
				if i >= n {
					select {
					case <-ch.done:
						return
					default:
					}
				}
				p := root
				for range 1 + r.IntN(3) {
					p += "/" + names[r.IntN(len(names))]
				}
				data := []byte(fmt.Sprintf("%d-%d", j, i))
				var err error
				switch r.IntN(3) {
				case 0:
					_, err = cl.Create(ctx, p, data, framework.WithParents())
				case 1:
					_, err = cl.Set(ctx, p, data)
				case 2:
					err = cl.Delete(ctx, p)
				}
				if err != nil && !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
					t.Errorf("churn %s: %v", p, err)
					return
				}
				ch.ops.Add(1)
			}
		}()
	}
	t.Cleanup(ch.stop)
	return ch
}

// waitOps waits until the churn made n changes in all.
func (ch *churner) waitOps(t *testing.T, n int64) {
	t.Helper()
	testenv.WaitFor(t, testenv.WaitLong, fmt.Sprintf("%d changes", n), func() bool { return ch.ops.Load() >= n })
}

// more waits for n changes more.
func (ch *churner) more(t *testing.T, n int64) {
	t.Helper()
	ch.waitOps(t, ch.ops.Load()+n)
}

// stop stops the churn and waits for its sessions' last changes.
func (ch *churner) stop() {
	select {
	case <-ch.done:
	default:
		close(ch.done)
	}
	ch.wg.Wait()
}

// states counts a client's connection states from now on.
type states struct {
	mu sync.Mutex
	n  map[framework.State]int
}

func countStates(t *testing.T, c *framework.Client) *states {
	s := &states{n: map[framework.State]int{}}
	t.Cleanup(c.AddListener(func(st framework.State) {
		s.mu.Lock()
		s.n[st]++
		s.mu.Unlock()
	}))
	return s
}

func (s *states) count(st framework.State) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[st]
}

// await waits until st was seen n times in all.
func (s *states) await(t *testing.T, st framework.State, n int) {
	t.Helper()
	testenv.WaitFor(t, testenv.WaitLong, fmt.Sprintf("%d× %s", n, st), func() bool { return s.count(st) >= n })
}

// scene is a cache under test, its client's states, and a bare client to
// compare it with.
type scene struct {
	t      *testing.T
	ctx    context.Context
	c      *framework.Client // the cache's
	reader *framework.Client // a bare client on the server holding the cache's watches
	st     *states
	cc     *cache.Cache
	k      *consumer
	root   string
	srv    func() *zktest.Server // the server holding the cache's session's watches
}

func newScene(t *testing.T, ctx context.Context, c, reader *framework.Client, root string, srv func() *zktest.Server) *scene {
	t.Helper()
	mk(t, ctx, reader, root)
	s := &scene{t: t, ctx: ctx, c: c, reader: reader, st: countStates(t, c), k: newConsumer(t), root: root, srv: srv}
	s.cc = startCache(t, ctx, c, root, s.k)
	return s
}

// check stops the churn and checks what must hold then: convergence,
// events, rebuilds, watches; then the cache is closed and must leave
// nothing.
func (s *scene) check(ch *churner) {
	t, ctx := s.t, s.ctx
	t.Helper()
	ch.stop()
	t.Logf("%d changes", ch.ops.Load())
	converged(t, ctx, s.reader, s.cc, s.k, s.root)
	testenv.Eventually(t, testenv.WaitLong, "one Rebuilt per session loss", func() error {
		s.k.mu.Lock()
		rebuilt := s.k.rebuilt
		s.k.mu.Unlock()
		if lost := s.st.count(framework.StateLost); rebuilt != lost {
			return fmt.Errorf("%d Rebuilt events, %d session losses", rebuilt, lost)
		}
		return nil
	})
	s.k.mu.Lock()
	if s.k.inited != 1 {
		t.Errorf("%d Initialized events, want 1", s.k.inited)
	}
	s.k.mu.Unlock()
	t.Logf("%d reconnections, %d session losses", s.st.count(framework.StateReconnected), s.st.count(framework.StateLost))

	// On the server: a data and a child watch per cached node, no more
	// (the churn's sessions and the reader set none); in recursive mode
	// one watch, on the root.
	testenv.Eventually(t, testenv.WaitLong, "the cache's watches on the server", func() error {
		var want []string
		for p := range s.cc.Snapshot() {
			want = append(want, p)
		}
		wantN := 2 * len(want)
		if !cache.DefaultOneShot() {
			// ZooKeeper 3.6-3.8 put a recursive watch in both the data and
			// the child table (DataTree.addWatch; later ones in the data
			// table only): mntr counts it twice.
			want, wantN = []string{s.root}, 2
		}
		sort.Strings(want)
		byS, err := s.srv().WatchesBySession()
		if err != nil {
			return err
		}
		got := slices.Clone(byS[s.c.Session().ID()])
		sort.Strings(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("data watches of the cache's session on %q, want %q", got, want)
		}
		if n, err := s.srv().WatchCount(); err != nil || n != wantN {
			return fmt.Errorf("%d watches on the server (%v), want %d", n, err, wantN)
		}
		return nil
	})

	if err := s.cc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, w := s.c.WatchStats(); w != 0 {
		t.Errorf("%d watch waiters after Close", w)
	}
	if !cache.DefaultOneShot() { // Close removed the persistent watch
		if n, err := s.srv().WatchCount(); err != nil || n != 0 {
			t.Errorf("%d watches on the server right after Close (%v), want 0", n, err)
		}
	}
	// (A goroutine past its wg.Done may still be listed for a moment.)
	testenv.Eventually(t, testenv.WaitShort, "no goroutine of the cache after Close", func() error {
		for _, fn := range []string{"recipes/cache.(*Cache).Start", "recipes/cache.(*Cache).watch", "recipes/cache.(*Cache).retry", "recipes/cache.(*Cache).awaitRoot"} {
			if n := testenv.GoroutinesMadeBy(fn); n != 0 {
				return fmt.Errorf("%d goroutines of %s", n, fn)
			}
		}
		return nil
	})
	// ZooKeeper keeps a watch until it fires (go-zookeeper cannot remove
	// one): once every watched node is gone, the server holds none of the
	// cache's session, and the closed cache set no new one nor told
	// anything.
	s.k.mu.Lock()
	before := s.k.count
	s.k.mu.Unlock()
	if err := s.reader.Delete(ctx, s.root, framework.WithChildren()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.WaitLong, "no watch left on the server", func() error {
		if n, err := s.srv().WatchCount(); err != nil || n != 0 {
			return fmt.Errorf("%d watches (%v)", n, err)
		}
		return nil
	})
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	if s.k.count != before {
		t.Errorf("%d events after Close", s.k.count-before)
	}
}

// A partition of the cache's connection mid-churn, shorter than the
// session timeout (a reconnection: no Rebuilt), then longer (the session
// expires: exactly one Rebuilt).
func TestCacheConvergesThroughPartitions(t *testing.T) {
	eachMode(t, testCacheConvergesThroughPartitions)
}

func testCacheConvergesThroughPartitions(t *testing.T) {
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	srv := zktest.StartServer(t)
	px := zktest.StartProxy(t, srv.Addr())
	// 6 s: suspended after 4 (go-zookeeper's read timeout), lost after 6.
	c := newClient(t, px.Addr(), framework.WithSessionTimeout(6*time.Second))
	reader := newClient(t, srv.ConnectString())
	s := newScene(t, ctx, c, reader, "/partition", func() *zktest.Server { return srv })
	ch := startChurn(t, ctx, srv.ConnectString(), s.root, 3, 700)
	ch.waitOps(t, 300)

	px.Blackhole()
	s.st.await(t, framework.StateSuspended, 1)
	px.Heal()
	s.st.await(t, framework.StateReconnected, 1)
	if n := s.st.count(framework.StateLost); n != 0 {
		t.Fatalf("session lost in a partition shorter than its timeout")
	}
	ch.more(t, 300)

	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	s.st.await(t, framework.StateLost, 1)
	s.st.await(t, framework.StateReconnected, 2)
	ch.more(t, 300)
	s.check(ch)
}

// The server restarted mid-churn (the session survives it or not: one
// Rebuilt per loss either way).
func TestCacheConvergesThroughServerRestart(t *testing.T) {
	eachMode(t, testCacheConvergesThroughServerRestart)
}

func testCacheConvergesThroughServerRestart(t *testing.T) {
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	srv := zktest.StartServer(t)
	c := newClient(t, srv.ConnectString(), framework.WithSessionTimeout(4*time.Second))
	reader := newClient(t, srv.ConnectString())
	s := newScene(t, ctx, c, reader, "/restart", func() *zktest.Server { return srv })
	ch := startChurn(t, ctx, srv.ConnectString(), s.root, 3, 700)
	ch.waitOps(t, 300)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	s.st.await(t, framework.StateReconnected, 1)
	ch.more(t, 300)
	s.check(ch)
}

// A 3-member ensemble whose leader is killed mid-churn. The cache's
// client and the reader use one follower alone, so that they read the
// same member (ZooKeeper 3.8.0 can leave a member without a transaction
// after a leader change, ZOOKEEPER-4712: a reader on another member could
// differ from the cache with no fault of the cache).
func TestCacheConvergesThroughLeaderKill(t *testing.T) {
	eachMode(t, testCacheConvergesThroughLeaderKill)
}

func testCacheConvergesThroughLeaderKill(t *testing.T) {
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	cl := zktest.StartCluster(t, 3)
	leader, err := cl.Leader()
	if err != nil {
		t.Fatal(err)
	}
	member := cl.Members()[(leader+1)%3]
	c := newClient(t, member.ConnectString(), framework.WithSessionTimeout(6*time.Second))
	reader := newClient(t, member.ConnectString())
	s := newScene(t, ctx, c, reader, "/leader", func() *zktest.Server { return member })
	ch := startChurn(t, ctx, cl.ConnectString(), s.root, 3, 700)
	ch.waitOps(t, 300)
	if err := cl.Members()[leader].Stop(); err != nil {
		t.Fatal(err)
	}
	if err := cl.WaitQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	s.st.await(t, framework.StateReconnected, 1)
	ch.more(t, 300)
	s.check(ch)
}

// noRetry is a client's policy that never retries: a read fails at the
// first connection loss, and the cache's own retry takes over.
func noRetry(t *testing.T) framework.Option {
	p, err := retry.NewNTimes(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return framework.WithRetryPolicy(p)
}

// A session lost while the cache holds no watch at all (a NodeCache whose
// one watch fired, and whose read of the change failed and waits to be
// run again) is still one Rebuilt. It was none when rebuilds were asked
// for by the watches a loss ends.
func TestCacheRebuiltWithNoWatchArmed(t *testing.T) { eachMode(t, testCacheRebuiltWithNoWatchArmed) }

func testCacheRebuiltWithNoWatchArmed(t *testing.T) {
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), noRetry(t))
	reader := newClient(t, srv.ConnectString())
	root := testenv.Path(t, "/nowatch")
	mk(t, ctx, reader, root)
	st := countStates(t, c)
	k := newConsumer(t)
	cc, err := cache.New(c, root, cache.WithMaxDepth(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	retrying, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cache.SetRetryHook(cc, func(string) {
		once.Do(func() {
			close(retrying)
			select { // held until released, or the test ends (a failure, not a hang in Close)
			case <-release:
			case <-ctx.Done():
			}
		})
	})
	cc.AddListener(k.on)
	if err := cc.Start(ctx); err != nil {
		t.Fatal(err)
	}

	held := px.HoldReply(zktest.OpGetData) // the cache's read of the change
	if _, err := reader.Set(ctx, root, []byte("changed")); err != nil {
		t.Fatal(err)
	}
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	held.Drop() // the read fails (no retry): the cache waits to run it again
	testenv.Recv(t, retrying, testenv.WaitShort, "the cache's retry")
	if _, w := c.WatchStats(); w != 0 {
		t.Fatalf("%d watch waiters: the cache should hold none here", w)
	}
	st.await(t, framework.StateReconnected, 1)
	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	st.await(t, framework.StateLost, 1)
	st.await(t, framework.StateReconnected, 2)
	close(release)

	converged(t, ctx, reader, cc, k, root)
	testenv.WaitFor(t, testenv.WaitLong, "one Rebuilt", func() bool { k.mu.Lock(); defer k.mu.Unlock(); return k.rebuilt == 1 })
	if n := st.count(framework.StateLost); n != 1 {
		t.Errorf("%d session losses, want 1", n)
	}
}

// recorder keeps the created, changed and deleted events of a cache as
// "type path data".
type recorder struct {
	mu  sync.Mutex
	evs []string
}

func (r *recorder) on(ev cache.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case cache.EventCreated, cache.EventChanged:
		r.evs = append(r.evs, fmt.Sprintf("%s %s %s", ev.Type, ev.Path, ev.New.Data))
	case cache.EventDeleted:
		r.evs = append(r.evs, fmt.Sprintf("%s %s %s", ev.Type, ev.Path, ev.Old.Data))
	default:
		r.evs = append(r.evs, ev.Type.String())
	}
}

// take returns the events so far and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.evs
	r.evs = nil
	return evs
}

// A node deleted and made again while the cache is cut off is told as
// deleted then created once it is back, even with the same version (and,
// for m, the same data) as before: the cache compares czxid, not version
// (CuratorCache compares versions and says nothing: the catalog's trap 3).
// Both after a reconnection in the same session and after a session loss.
func TestCacheSeesRecreateWhileCutOff(t *testing.T) { eachMode(t, testCacheSeesRecreateWhileCutOff) }

func testCacheSeesRecreateWhileCutOff(t *testing.T) {
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), framework.WithSessionTimeout(4*time.Second))
	reader := newClient(t, srv.ConnectString())
	root := testenv.Path(t, "/recreate")
	mk(t, ctx, reader, root+"/n", root+"/m")
	if _, err := reader.Set(ctx, root+"/n", []byte("n1")); err != nil { // version 1
		t.Fatal(err)
	}
	st := countStates(t, c)
	k := newConsumer(t)
	rec := &recorder{}
	cc := startCache(t, ctx, c, root, k)
	cc.AddListener(rec.on)
	converged(t, ctx, reader, cc, k, root)
	rec.take()
	recreate := func(data string) {
		t.Helper()
		if err := reader.Delete(ctx, root+"/n"); err != nil {
			t.Fatal(err)
		}
		mk(t, ctx, reader, root+"/n")
		if _, err := reader.Set(ctx, root+"/n", []byte(data)); err != nil { // version 1 again
			t.Fatal(err)
		}
		if err := reader.Delete(ctx, root+"/m"); err != nil {
			t.Fatal(err)
		}
		mk(t, ctx, reader, root+"/m") // the same data, version 0 again
	}
	want := func(what string, want ...string) {
		t.Helper()
		testenv.WaitFor(t, testenv.WaitLong, what, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.evs) >= len(want) })
		converged(t, ctx, reader, cc, k, root)
		got := rec.take()
		if want[0] == "rebuilt" && (len(got) == 0 || got[len(got)-1] != "rebuilt") {
			t.Errorf("%s: events %q: Rebuilt not last", what, got)
		}
		// Per node in order; the nodes in any order.
		sort.SliceStable(got, func(i, j int) bool { return nodeOf(got[i]) < nodeOf(got[j]) })
		if !slices.Equal(got, want) {
			t.Errorf("%s: events %q, want %q", what, got, want)
		}
	}

	// Cut off (connections refused), the session alive.
	px.Refuse(true)
	px.Drop()
	st.await(t, framework.StateSuspended, 1)
	recreate("n2")
	px.Refuse(false)
	st.await(t, framework.StateReconnected, 1)
	want("after a reconnection",
		"deleted "+root+"/m m", "created "+root+"/m m",
		"deleted "+root+"/n n1", "created "+root+"/n n2")
	if n := st.count(framework.StateLost); n != 0 {
		t.Fatalf("%d session losses in a cut shorter than the session timeout", n)
	}

	// Cut off until the session expires.
	px.Blackhole()
	recreate("n3")
	if err := zktest.ExpireSession(ctx, px, srv, c.Session().ID()); err != nil {
		t.Fatal(err)
	}
	px.Heal()
	want("after a session loss",
		"rebuilt",
		"deleted "+root+"/m m", "created "+root+"/m m",
		"deleted "+root+"/n n2", "created "+root+"/n n3")
}

// nodeOf is the path of a recorded event ("" for a marker).
func nodeOf(ev string) string {
	f := strings.Fields(ev)
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// Initialized comes once, after every node of the tree was told, even when
// a read of the first load fails (the cache runs it again; Curator's
// CuratorCache can say initialized over a partial tree then: the
// catalog's §2.2, 6.).
func TestCacheInitializedAfterEveryNode(t *testing.T) {
	eachMode(t, testCacheInitializedAfterEveryNode)
}

func testCacheInitializedAfterEveryNode(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot(), noRetry(t))
	reader := newClient(t, srv.ConnectString())
	root := testenv.Path(t, "/init")
	for _, a := range []string{"a", "b", "c"} {
		mk(t, ctx, reader, root+"/"+a+"/x", root+"/"+a+"/y")
	}
	tree, err := readTree(ctx, reader, root)
	if err != nil {
		t.Fatal(err)
	}
	k := newConsumer(t)
	cc, err := cache.New(c, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	var retries atomic.Int32
	cache.SetRetryHook(cc, func(string) { retries.Add(1) })
	cc.AddListener(k.on)
	held := px.HoldReply(zktest.OpGetChildren2) // the root's listing
	started := make(chan error, 1)
	go func() { started <- cc.Start(ctx) }()
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	held.Drop()
	if err := testenv.Recv(t, started, testenv.WaitLong, "Start"); err != nil {
		t.Fatal(err)
	}
	if retries.Load() == 0 {
		t.Fatal("no read failed: the test proves nothing")
	}
	testenv.WaitFor(t, testenv.WaitShort, "Initialized", func() bool { k.mu.Lock(); defer k.mu.Unlock(); return k.inited == 1 })
	k.mu.Lock()
	atInit := k.atInit
	k.mu.Unlock()
	if err := same(atInit, tree); err != nil {
		t.Errorf("told before Initialized: %v", err)
	}
	mk(t, ctx, reader, root+"/d")
	converged(t, ctx, reader, cc, k, root)
	if k.inited != 1 {
		t.Errorf("%d Initialized events, want 1", k.inited)
	}
}
