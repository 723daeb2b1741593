package cache_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/cache"
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

// check is what must hold once the churn stopped: convergence, events,
// rebuilds, watches; then the cache is closed and must leave nothing.
func (s *scene) check() {
	t, ctx := s.t, s.ctx
	t.Helper()
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
	// (the churn's sessions and the reader set none).
	testenv.Eventually(t, testenv.WaitLong, "one data and one child watch per cached node", func() error {
		var want []string
		for p := range s.cc.Snapshot() {
			want = append(want, p)
		}
		sort.Strings(want)
		byS, err := s.srv().WatchesBySession()
		if err != nil {
			return err
		}
		got := slices.Clone(byS[s.c.Session().ID()])
		sort.Strings(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("data watches of the cache's session on %q, cached %q", got, want)
		}
		if n, err := s.srv().WatchCount(); err != nil || n != 2*len(want) {
			return fmt.Errorf("%d watches on the server (%v), want %d", n, err, 2*len(want))
		}
		return nil
	})

	if err := s.cc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, w := s.c.WatchStats(); w != 0 {
		t.Errorf("%d watch waiters after Close", w)
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
	ch.stop()
	t.Logf("%d changes", ch.ops.Load())
	s.check()
}

// The server restarted mid-churn (the session survives it or not: one
// Rebuilt per loss either way).
func TestCacheConvergesThroughServerRestart(t *testing.T) {
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
	ch.stop()
	t.Logf("%d changes", ch.ops.Load())
	s.check()
}

// A 3-member ensemble whose leader is killed mid-churn. The cache's
// client and the reader use one follower alone, so that they read the
// same member (ZooKeeper 3.8.0 can leave a member without a transaction
// after a leader change, ZOOKEEPER-4712: a reader on another member could
// differ from the cache with no fault of the cache).
func TestCacheConvergesThroughLeaderKill(t *testing.T) {
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
	ch.stop()
	t.Logf("%d changes", ch.ops.Load())
	s.check()
}
