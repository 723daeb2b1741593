// The faults directory is gocurator's fault suite (tests only: nothing to
// import). It drives the recipes through real faults on a real 3-node
// ZooKeeper ensemble (leader and follower killed and restarted, clients
// partitioned for less and more than the session timeout, sessions
// expired, a holder process killed with SIGKILL, stalled listeners) and
// checks, on every run, that:
//
//   - a mutex never has two holders that were not told of a loss, checked by
//     a resource that accepts work only with a fencing token higher than the
//     last it saw, a semaphore never grants more than its maximum, and a
//     read-write lock never grants a write beside another holding, nor a
//     read beside a write, that was not told of a loss;
//   - every contender acquires again once the faults stop;
//   - after all clients close, no lock, lease or member node is left, the
//     servers hold no watch, and no goroutine is left in the test process.
//
// Run it with `go test -race ./faults/` (part of `make test`).
// GOCURATOR_SOAK=5m runs the fault cycle for that long instead of once.

package faults_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	if os.Getenv(latchChildEnv) != "" {
		os.Exit(latchChildMain())
	}
	goleak.VerifyTestMain(m)
}

// netClient is a client whose every connection goes through proxies of its
// own (one per ensemble member), so its network can be cut alone.
type netClient struct {
	*framework.Client
	proxies []*zktest.Proxy
}

func (n *netClient) partition() {
	for _, p := range n.proxies {
		p.Blackhole()
	}
}

func (n *netClient) heal() {
	for _, p := range n.proxies {
		p.Heal()
	}
}

func dial(t testing.TB, cl *zktest.Cluster, opts ...framework.Option) *netClient {
	t.Helper()
	var addrs []string
	n := &netClient{}
	for _, m := range cl.Members() {
		p := zktest.StartProxy(t, m.Addr())
		n.proxies = append(n.proxies, p)
		addrs = append(addrs, p.Addr())
	}
	n.Client = connect(t, strings.Join(addrs, ","), opts...)
	return n
}

func connect(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	return testenv.Client(t, connect, append([]framework.Option{framework.WithConnectionTimeout(3 * time.Second)}, opts...)...)
}

// serverWatches sums the watch counts of the running members.
func serverWatches(cl *zktest.Cluster) (int, error) {
	total := 0
	for _, m := range cl.Members() {
		n, err := m.WatchCount()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// diverged returns the running members whose view (memberViews's views)
// differs from the one most of the cluster's members share (none if no view
// has a majority).
func diverged(cl *zktest.Cluster, views map[int]string) []int {
	count := map[string]int{}
	for _, v := range views {
		count[v]++
	}
	var major string
	for v, n := range count {
		if 2*n > len(cl.Members()) {
			major = v
		}
	}
	if major == "" {
		return nil
	}
	var out []int
	for i, v := range views {
		if v != major {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// memberViews lists the children of each path as each member of the
// ensemble serves them (a connection to that member alone), one line per
// member and path, with each running member's view of all paths, and
// reports whether the running members agree. ZooKeeper 3.8.0 (Debian's)
// can leave a member without a transaction after a leader change
// (ZOOKEEPER-4712, ZOOKEEPER-4785): its clients then see contenders the
// others do not, or miss some, and no client can tell.
func memberViews(cl *zktest.Cluster, paths []string) (lines []string, views map[int]string, agree bool) {
	agree = true
	views = map[int]string{}
	first := map[string]string{}
	for i, m := range cl.Members() {
		if !m.Running() {
			lines = append(lines, fmt.Sprintf("member %d: stopped", i))
			continue
		}
		conn, _, err := zk.Connect([]string{m.Addr()}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLog{}))
		if err != nil {
			lines = append(lines, fmt.Sprintf("member %d: %v", i, err))
			continue
		}
		for _, p := range paths {
			kids, _, err := conn.Children(p)
			slices.Sort(kids)
			view := fmt.Sprintf("%v %v", kids, err)
			lines = append(lines, fmt.Sprintf("member %d lists %s: %s", i, p, view))
			views[i] += p + ": " + view + "\n"
			if f, ok := first[p]; ok && f != view {
				agree = false
			} else if !ok {
				first[p] = view
			}
		}
		conn.Close()
	}
	return lines, views, agree
}

type quietLog struct{}

func (quietLog) Printf(string, ...any) {}

// faultScene is what a recipe's fault test starts from: a 3-member
// ensemble, a client to look with (admin), clients each behind proxies
// of their own, the report, and the test's context, which the test ends
// with errTestOver (cancel) should it end early.
type faultScene struct {
	cl      *zktest.Cluster
	admin   *framework.Client
	clients []*netClient
	rep     *report
	ctx     context.Context
	cancel  context.CancelCauseFunc

	stop  chan struct{}  // closed by finish
	wg    sync.WaitGroup // the workers
	final atomic.Int32   // workers that held once stop was closed

	mu         sync.Mutex   // hold's enter and leave
	grants     atomic.Int64 // holdings so far (hold)
	violations []string     // what hold's enters reported; read once finish returned
}

func newFaultScene(t *testing.T, clients int) *faultScene {
	s := &faultScene{cl: zktest.StartCluster(t, 3), rep: &report{}}
	s.admin = connect(t, s.cl.ConnectString())
	s.ctx, s.cancel = context.WithCancelCause(testenv.Ctx(t, 10*time.Minute+soak(t)))
	for range clients {
		s.clients = append(s.clients, dial(t, s.cl))
	}
	return s
}

// gaveUp takes a worker's failed acquisition: false, try again (a fault,
// as a user would); true once the test's context has ended, the worker
// then returns, and unless the test is over, that is an error.
func (s *faultScene) gaveUp(t *testing.T, who string, err error) bool {
	if s.ctx.Err() == nil {
		return false
	}
	if !errors.Is(context.Cause(s.ctx), errTestOver) {
		t.Errorf("%s never acquired again: %v", who, err)
	}
	return true
}

// work starts one worker per client, i and named "client-i", which runs
// rounds (one acquisition each) until finish: a round reports whether it
// held (for the mutex, passed the fence) and whether the worker gave up
// (gaveUp: the worker returns). A worker that holds once stop is closed
// is counted final, and returns. Should the test end early, the workers
// stop before their clients close and before the test is over.
func (s *faultScene) work(t *testing.T, round func(i int, name string) (held, gaveUp bool)) {
	s.stop = make(chan struct{})
	for i := range s.clients {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			name := fmt.Sprintf("client-%d", i)
			for {
				stopped := false
				select {
				case <-s.stop:
					stopped = true
				default:
				}
				held, gaveUp := round(i, name)
				switch {
				case gaveUp:
					return
				case stopped && held:
					s.final.Add(1)
					return
				}
			}
		}()
	}
	t.Cleanup(func() { s.cancel(errTestOver); s.wg.Wait() })
}

// finish ends work once the faults are over: every worker holds once
// more (a divergence of the last fault's is resynced under paths, as
// during the cycle), then returns.
func (s *faultScene) finish(t *testing.T, paths ...string) {
	close(s.stop)
	n := func() int { return int(s.final.Load()) }
	awaitProgress(t, s.cl, s.rep, "after the faults", func() bool { return n() == len(s.clients) }, paths)
	s.wg.Wait()
	if n() != len(s.clients) {
		t.Errorf("%d of %d workers held after the faults stopped", n(), len(s.clients))
	}
}

// hold is one holding of a worker's round, once acquired: enter, under
// the scene's lock, registers it and says what it broke ("" if nothing);
// it is held 2 ms; leave, under the lock, forgets it; then release's error
// goes through the release rule.
func (s *faultScene) hold(t *testing.T, name string, enter func() (violation string), leave func(), release func(context.Context) error) {
	s.mu.Lock()
	if v := enter(); v != "" {
		s.violations = append(s.violations, v)
	}
	s.mu.Unlock()
	s.grants.Add(1)
	time.Sleep(2 * time.Millisecond)
	s.mu.Lock()
	leave()
	s.mu.Unlock()
	s.released(t, name, release(s.ctx))
}

// released applies the release rule: nil, or a loss the holder was told
// of; nothing else under any fault.
func (s *faultScene) released(t *testing.T, who string, err error) {
	if err == nil {
		return
	}
	if !errors.Is(err, curator.ErrLockLost) {
		t.Errorf("%s release: %v, want nil or ErrLockLost", who, err)
	}
	s.rep.add("%s release after a loss: %v", who, err)
}

// report collects the figures of a run for the log and the closing note.
type report struct {
	mu    sync.Mutex
	lines []string
}

func (r *report) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *report) log(t testing.TB) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lines {
		t.Log(l)
	}
}
