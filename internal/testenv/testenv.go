// Package testenv is what the module's test packages share: a ZooKeeper
// server per test binary, clients closed at clean-up, unique paths,
// contexts, and waits on conditions with generous deadlines (CI is a
// loaded 2-core machine running -race). It is internal: users write their
// tests with testing/zktest.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

// Deadlines of waits in tests: generous, never a measure of speed.
const (
	WaitLong  = 60 * time.Second // anything that involves a server start, a session expiry or many parties
	WaitShort = 20 * time.Second // anything else
	// SessionTimeout is the session timeout of test clients: short, so
	// expiries happen within a test.
	SessionTimeout = 2 * time.Second
)

var shared *zktest.Server

// Shared returns the server Main started for the test binary; tests that
// inject no fault share it, each on paths of its own.
func Shared() *zktest.Server { return shared }

// Main runs a test binary: it starts the shared server (and one more
// server for each of extra, stored there: for tests that count a server's
// watches and so must have it to themselves), runs the tests, stops the
// servers, and then fails the run if goroutines are left behind (goleak).
// Call it from TestMain. A ZooKeeper that is not installed fails the run
// with the install command, never skips it.
func Main(m *testing.M, extra ...**zktest.Server) {
	goleak.VerifyTestMain(withServers{m, append([]**zktest.Server{&shared}, extra...)})
}

type withServers struct {
	m       *testing.M
	servers []**zktest.Server
}

func (w withServers) Run() int {
	for _, s := range w.servers {
		srv, err := zktest.NewServer()
		if err != nil {
			fmt.Fprintln(os.Stderr, "these tests need ZooKeeper:", err)
			return 1
		}
		*s = srv
		defer srv.Close()
	}
	return w.m.Run()
}

// Patient is a retry policy for tests that must ride out a fault rather
// than give up: every 50 ms for 30 s.
type Patient struct{}

// Next implements retry.Policy.
func (Patient) Next(_ int, elapsed time.Duration) (time.Duration, bool) {
	return 50 * time.Millisecond, elapsed < 30*time.Second
}

// Client connects a client (a session of its own), waits until it is
// connected and closes it at clean-up. Defaults: SessionTimeout, a 5 s
// connection timeout; opts come after them and win.
func Client(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	c := ClientNoWait(t, connect, opts...)
	if err := c.BlockUntilConnected(Ctx(t, WaitShort)); err != nil {
		t.Fatalf("BlockUntilConnected(%s): %v", connect, err)
	}
	return c
}

// ClientNoWait is Client without the wait for the first connection.
func ClientNoWait(t testing.TB, connect string, opts ...framework.Option) *framework.Client {
	t.Helper()
	all := append([]framework.Option{
		framework.WithSessionTimeout(SessionTimeout),
		framework.WithConnectionTimeout(5 * time.Second),
	}, opts...)
	c, err := framework.New(connect, all...)
	if err != nil {
		t.Fatalf("framework.New(%q): %v", connect, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// Ctx returns a context ended after d or at clean-up.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var pathSeq atomic.Int64

// Path returns a path under root that no other test, and no other run on
// the same server, uses: root/<test name>-<random>-<n>.
func Path(t testing.TB, root string) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("%s/%s-%d", root, Uniq(name), pathSeq.Add(1))
}

// Uniq returns name plus a random suffix.
func Uniq(name string) string {
	var b [4]byte
	rand.Read(b[:])
	return name + "-" + hex.EncodeToString(b[:])
}

// WaitFor polls cond until it holds, or fails the test after d.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	Eventually(t, d, what, func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	})
}

// Eventually polls cond until it returns nil, or fails the test after d
// with cond's last error.
func Eventually(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so within %v: %v", what, d, err)
		}
		time.Sleep(20 * time.Millisecond) // a polling interval, not synchronization
	}
}

// Children returns path's children on the server (none if it does not
// exist).
func Children(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	kids, _, err := c.Children(Ctx(t, WaitShort), path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("children of %s: %v", path, err)
	}
	return kids
}

// WatchedUnder returns, for each node under path that srv has a data or
// exists watch on, how many sessions watch it. Watches on path itself are
// left out: a lock path keeps one kept watch per client that took the lock
// (framework.Mark), which says nothing of the queue.
func WatchedUnder(t testing.TB, srv *zktest.Server, path string) map[string]int {
	t.Helper()
	m, err := srv.WatchesByPath()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for p, sessions := range m {
		if strings.HasPrefix(p, path+"/") {
			out[strings.TrimPrefix(p, path+"/")] = len(sessions)
		}
	}
	return out
}

// NotYet fails the test if ch has already delivered: what is still
// waiting. It does not wait; call it once the party it waits on is known
// to be in place.
func NotYet[T any](t testing.TB, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s did not wait: it returned %v", what, v)
	default:
	}
}

// IsClosed reports whether ch is closed.
func IsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Policies are the suspend policies, named, for tests that run under each.
var Policies = []struct {
	Name   string
	Policy curator.SuspendPolicy
}{{"LoseOnSuspend", curator.LoseOnSuspend}, {"LoseOnLost", curator.LoseOnLost}}

// First returns the full path of path's child with the lowest sequence
// number on the server ("" if it has no sequential child): in a lock's
// queue, the holder. Inside a critical section it is a check of exclusion
// that does not depend on timing: a node made after ours has a higher
// sequence, so it is ours while we hold, however short the hold. It does
// not fail the test, so a test's goroutines may call it.
func First(c *framework.Client, path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), WaitShort)
	defer cancel()
	kids, _, err := c.Children(ctx, path)
	if err != nil {
		return "", fmt.Errorf("children of %s: %w", path, err)
	}
	first, low := "", int64(-1)
	for _, k := range kids {
		seq, ok := sequence(k)
		if ok && (low < 0 || seq < low) {
			first, low = k, seq
		}
	}
	if first == "" {
		return "", nil
	}
	return path + "/" + first, nil
}

// IsFirst reports, as an error, unless node (a full path) is First among
// its parent's children.
func IsFirst(c *framework.Client, node string) error {
	parent := node[:max(strings.LastIndex(node, "/"), 0)]
	first, err := First(c, parent)
	if err != nil {
		return err
	}
	if first != node {
		return fmt.Errorf("holder %q is not first among %s's children on the server: %q is", node, parent, first)
	}
	return nil
}

// sequence returns the sequence number ZooKeeper appended to a sequential
// node's name (its last ten characters, digits).
func sequence(name string) (int64, bool) {
	if len(name) < 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[len(name)-10:], 10, 64)
	return n, err == nil && n >= 0
}

// GoroutinesMadeBy counts the live goroutines that fn started, by their
// "created by" line (one made but not run yet shows no function of its
// own). fn is the function's name within the module, as a stack shows it:
// "recipes/leader.newDispatcher", "internal/driver.(*Contender).Hold".
// Tests check with it that a recipe's goroutines end while its client
// lives on (goleak only looks at the end of the binary).
func GoroutinesMadeBy(fn string) int {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "created by github.com/gocurator/curator/"+fn+" ")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// RestoreLater registers now the clean-up that undoes test hooks, and
// returns the func to hand each hook's restore to. Called before the test
// makes its clients, it restores the hooks after every client is closed
// (clean-ups run last in, first out), when no goroutine of theirs can run
// a hook any more; a defer, or a clean-up registered after the clients,
// would restore a hook under them. The restores run last-given first.
func RestoreLater(t testing.TB) (later func(restore func())) {
	var mu sync.Mutex
	var restores []func()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for i := len(restores) - 1; i >= 0; i-- {
			restores[i]()
		}
	})
	return func(restore func()) {
		mu.Lock()
		defer mu.Unlock()
		restores = append(restores, restore)
	}
}

// Recv returns what ch delivers, or fails the test after d (what is what
// the test waits for): a receive that only a hang would not end.
func Recv[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: not within %v", what, d)
		panic("unreachable")
	}
}
