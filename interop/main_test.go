// Package interop_test shows that gocurator and Apache Curator 5.4 (Debian's
// jars, Java 17) share locks, read-write locks, semaphores and barriers on
// the same ZooKeeper paths, as two Curator clients would (issue #9), and
// that a gocurator cache sees what Curator writes as Curator's
// CuratorCache does (issue #40).
//
// TestCurator compiles testdata/CuratorPeer.java with javac against the
// Debian jars into a temporary directory, starts one real ZooKeeper server
// (zktest.StartServer: a local JVM, or ZK_CONNECT) and runs its subtests,
// each of which starts Curator peers (one JVM per concurrent Java actor,
// driven line by line over stdin/stdout) beside gocurator clients on the
// same paths. The directory holds only tests.
//
// Synchronization is by observation, never by sleeping: a test waits until
// the queue under a lock path shows the contender it expects, and checks
// that a blocked party is still blocked after a short grace period
// (stillBlocked) before it releases the party ahead of it.
package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// installCurator installs what the Java side needs on Debian (also done by
// scripts/install-deps.sh).
const installCurator = "apt-get install -y libcurator-recipes-java libcurator-framework-java libcurator-client-java libcurator-discovery-java"

const javaDir = "/usr/share/java"

// compileJars is the Java peer's class path (Debian's Curator 5.4 jars);
// at run time slf4j-simple is added so that Curator's and ZooKeeper's
// warnings reach the peer's log.
var compileJars = []string{"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"curator-x-discovery.jar", "jackson-databind.jar", "jackson-core.jar", "jackson-annotations.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar"}

// Deadlines: generous, CI is a loaded 2-core machine running -race, and a
// JVM takes a second or more to start.
const (
	answerTimeout = 2 * time.Minute        // any one answer of a Curator peer
	eventTimeout  = time.Minute            // anything we wait to see happen
	blockedGrace  = 500 * time.Millisecond // "still blocked after ..." checks
	testTimeout   = 4 * time.Minute        // one subtest's context (testenv.Ctx: ends with the test, and so do blocked calls)
)

// env is what the subtests share: the server and the compiled peer.
type env struct {
	zk        *zktest.Server
	java      string
	classpath string
	seq       atomic.Int64
}

// TestCurator runs every interoperability scenario against one server and
// one compiled peer.
func TestCurator(t *testing.T) {
	e := setup(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"Mutex", testMutex},
		{"MutexQueueOrder", testMutexQueueOrder},
		{"MutexRevocation", testMutexRevocation},
		{"NodeData", testNodeData},
		{"ProtectedNames", testProtectedNames},
		{"ForeignChildren", testForeignChildren},
		{"ReadWrite", testReadWrite},
		{"ReadWriteQueue", testReadWriteQueue},
		{"ReadWriteParticipants", testReadWriteParticipants},
		{"Downgrade", testDowngrade},
		{"Semaphore", testSemaphore},
		{"SemaphoreMutex", testSemaphoreMutex},
		{"SharedCount", testSharedCount},
		{"CounterBothSides", testCounterBothSides},
		{"CounterPromoted", testCounterPromoted},
		{"CounterEncodings", testCounterEncodings},
		{"SharedValue", testSharedValue},
		{"Barrier", testBarrier},
		{"DoubleBarrier", testDoubleBarrier},
		{"Inspect", testInspect},
		{"LeaderLatchMixed", testLeaderLatchMixed},
		{"LeaderLatchExpiry", testLeaderLatchExpiry},
		{"LeaderSelectorMixed", testLeaderSelectorMixed},
		{"GroupMember", testGroupMember},
		{"Discovery", testDiscovery},
		{"DiscoveryExpiry", testDiscoveryExpiry},
		{"CacheCuratorTree", testCacheCuratorTree},
		{"CacheSameAsCuratorCache", testCacheSameAsCuratorCache},
		{"QueueJavaToGo", testQueueJavaToGo},
		{"QueueGoToJava", testQueueGoToJava},
		{"QueuePriorityDelay", testQueuePriorityDelay},
		{"QueueIDAndSimple", testQueueIDAndSimple},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, e)
		})
	}
}

// setup finds Java and Curator's jars (failing with the command that
// installs them), compiles the peer into t.TempDir() and starts ZooKeeper.
func setup(t testing.TB) *env {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Fatalf("the Curator interop tests compile a Java peer, and javac is missing: %v\ninstall a JDK and Curator 5.4 with: apt-get install -y default-jdk-headless && %s", err, installCurator)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is missing: %v\ninstall it and Curator 5.4 with: apt-get install -y default-jdk-headless && %s", err, installCurator)
	}
	var jars []string
	for _, j := range append(compileJars, "slf4j-simple.jar") {
		p := filepath.Join(javaDir, j)
		if !fileExists(p) {
			t.Fatalf("Curator's jars are missing (%s not found)\ninstall them with: %s", p, installCurator)
		}
		jars = append(jars, p)
	}
	if v, _ := filepath.Glob(filepath.Join(javaDir, "curator-recipes-*.jar")); len(v) > 0 {
		t.Logf("Curator: %s", filepath.Base(v[0]))
	}
	classes := t.TempDir()
	compileCP := strings.Join(jars[:len(compileJars)], ":")
	out, err := exec.Command(javac, "-nowarn", "-Xlint:none", "-encoding", "UTF-8",
		"-d", classes, "-cp", compileCP, filepath.Join("testdata", "CuratorPeer.java"),
		filepath.Join("testdata", "DiscoveryCommands.java"), filepath.Join("testdata", "NodesCommands.java"),
		filepath.Join("testdata", "QueueCommands.java"), filepath.Join("testdata", "CounterCommands.java")).CombinedOutput()
	if err != nil {
		t.Fatalf("javac testdata/CuratorPeer.java against Curator's jars: %v\n%s\n(are they Curator 5.4? %s)", err, out, installCurator)
	}
	return &env{zk: zktest.StartServer(t), java: java, classpath: classes + ":" + strings.Join(jars, ":")}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// path returns a fresh path for one scenario.
func (e *env) path(t *testing.T) string {
	return fmt.Sprintf("/interop/%s-%d", strings.ReplaceAll(t.Name(), "/", "."), e.seq.Add(1))
}

// ---- the Curator peer ----

// peer is one JVM running testdata/CuratorPeer.java: one Curator client.
type peer struct {
	t    testing.TB
	name string
	in   io.WriteCloser

	mu      sync.Mutex
	pending []chan string // answers owed, in the order the commands went
	exited  bool
	log     bytes.Buffer // the peer's stderr: every command and answer
}

// startPeers starts n Curator peers at once (a JVM takes a while) and
// connects each to the server. They quit when the test ends; their logs
// are printed if it failed.
func (e *env) startPeers(t testing.TB, n int) []*peer {
	t.Helper()
	peers := make([]*peer, n)
	answers := make([]<-chan string, n)
	for i := range peers {
		peers[i] = e.launch(t, fmt.Sprintf("java%d", i+1))
		answers[i] = peers[i].send("connect " + e.zk.ConnectString())
	}
	for i, p := range peers {
		if got := p.answer(answers[i], "connect"); got != "ok" {
			t.Fatalf("%s: connect: %s", p.name, got)
		}
	}
	return peers
}

func (e *env) launch(t testing.TB, name string) *peer {
	t.Helper()
	cmd := exec.Command(e.java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn=error",
		"-cp", e.classpath, "CuratorPeer")
	p := &peer{t: t, name: name}
	cmd.Stderr = lockedWriter{&p.mu, &p.log}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the Curator peer: %v", err)
	}
	p.in = in
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			if len(p.pending) == 0 {
				fmt.Fprintf(&p.log, "[go] unexpected line from the peer: %s\n", sc.Text())
			} else {
				p.pending[0] <- sc.Text()
				p.pending = p.pending[1:]
			}
			p.mu.Unlock()
		}
		p.mu.Lock()
		p.exited = true
		for _, ch := range p.pending {
			ch <- "error the peer exited"
		}
		p.pending = nil
		p.mu.Unlock()
	}()
	t.Cleanup(func() {
		p.mu.Lock()
		fmt.Fprintln(in, "quit")
		p.mu.Unlock()
		in.Close()
		exited := make(chan error, 1)
		go func() { <-read; exited <- cmd.Wait() }()
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			p.mu.Lock()
			t.Logf("log of Curator peer %s:\n%s", p.name, p.log.String())
			p.mu.Unlock()
		}
	})
	return p
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

// send issues a command; its answer comes on the channel returned. Commands
// run one after the other in the peer, so a command sent while an earlier
// one blocks waits for it.
func (p *peer) send(cmd string) <-chan string {
	ch := make(chan string, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		ch <- "error the peer exited"
		return ch
	}
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		ch <- "error writing to the peer: " + err.Error()
		return ch
	}
	p.pending = append(p.pending, ch)
	return ch
}

// answer waits for an answer (what names the command, for the failure).
func (p *peer) answer(ch <-chan string, what string) string {
	p.t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(answerTimeout):
		p.t.Fatalf("Curator peer %s: no answer to %q in %v", p.name, what, answerTimeout)
		return ""
	}
}

// do issues a command and waits for its answer.
func (p *peer) do(cmd string) string {
	p.t.Helper()
	return p.answer(p.send(cmd), cmd)
}

// must issues a command that has to succeed and returns what follows "ok".
func (p *peer) must(cmd string) string {
	p.t.Helper()
	return p.ok(p.send(cmd), cmd)
}

// ok waits for an answer that has to be "ok [...]" and returns the rest.
func (p *peer) ok(ch <-chan string, what string) string {
	p.t.Helper()
	got := p.answer(ch, what)
	if got != "ok" && !strings.HasPrefix(got, "ok ") {
		p.t.Fatalf("Curator peer %s: %s: %s", p.name, what, got)
	}
	return strings.TrimSpace(strings.TrimPrefix(got, "ok"))
}

// list parses "a,b,c" ("" is the empty list).
func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// ---- gocurator side ----

func newClient(t *testing.T, e *env) *framework.Client {
	t.Helper()
	c, err := framework.New(e.zk.ConnectString(), framework.WithSessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// async runs f on a goroutine; its result comes on the channel.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// done waits for an async call to return nil.
func done(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(eventTimeout):
		t.Fatalf("%s: not done in %v", what, eventTimeout)
	}
}

// stillBlocked fails if ch delivers within blockedGrace: a bounded check
// that a waiter (Go or Java) is still waiting.
func stillBlocked[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s did not wait: it returned %v", what, v)
	case <-time.After(blockedGrace):
	}
}

// eventually polls cond until it holds; describe says what was seen last.
func eventually(t *testing.T, what string, cond func() bool, describe func() string) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen in %v (last: %s)", what, eventTimeout, describe())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// children returns the sorted names under path (none if it is missing).
func children(t *testing.T, ctx context.Context, c *framework.Client, path string) []string {
	t.Helper()
	kids, _, err := c.Children(ctx, path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("children of %s: %v", path, err)
	}
	slices.Sort(kids)
	return kids
}

// awaitChildren waits until the names under path (Curator's and ours)
// number n, and returns them sorted by name.
func awaitChildren(t *testing.T, ctx context.Context, c *framework.Client, path string, n int) []string {
	t.Helper()
	var kids []string
	eventually(t, fmt.Sprintf("%d nodes under %s", n, path),
		func() bool { kids = children(t, ctx, c, path); return len(kids) == n },
		func() string { return strings.Join(kids, ",") })
	return kids
}

// Node names as Curator makes them: protected mode is "_c_" + a UUID + "-".
const uuidRE = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`

var (
	lockNodeRE   = regexp.MustCompile(`^_c_` + uuidRE + `-lock-(\d{10})$`)
	readNodeRE   = regexp.MustCompile(`^_c_` + uuidRE + `-__READ__(\d{10})$`)
	writeNodeRE  = regexp.MustCompile(`^_c_` + uuidRE + `-__WRIT__(\d{10})$`)
	leaseNodeRE  = regexp.MustCompile(`^_c_` + uuidRE + `-lease-(\d{10})$`)
	memberNodeRE = regexp.MustCompile(`^(` + uuidRE + `|_c_` + uuidRE + `-member)$`) // Curator's, gocurator's (protected)
)

// checkName fails unless the last element of node matches re.
func checkName(t *testing.T, re *regexp.Regexp, node, whose string) {
	t.Helper()
	if !re.MatchString(filepath.Base(node)) {
		t.Errorf("%s node %q is not named as Curator names it (%s)", whose, node, re)
	}
}

// seqOf returns the sequence suffix of a contender node.
func seqOf(node string) string {
	for _, re := range []*regexp.Regexp{lockNodeRE, readNodeRE, writeNodeRE, leaseNodeRE} {
		if m := re.FindStringSubmatch(filepath.Base(node)); m != nil {
			return m[1]
		}
	}
	return ""
}
