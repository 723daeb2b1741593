// Package zktest runs real Apache ZooKeeper servers for tests, in the style
// of net/http/httptest. It is the Go counterpart of Apache curator-test:
//
//   - [Server] is one standalone server (curator-test TestingServer),
//   - [Cluster] is an ensemble of N servers on loopback (TestingCluster),
//   - [Proxy] is a TCP proxy between a client and a server for fault
//     injection (partitions, dropped connections, lost or held replies)
//     that also counts requests per op code; curator tests do this with
//     Java-side hooks, here it happens on the wire,
//   - [ExpireSession] makes the server expire a client's session for real
//     (curator-test's KillSession, but by a partition instead of a second
//     client stealing the session password).
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// Servers are separate JVMs (QuorumPeerMain) with a private temporary
// directory ($TMPDIR/zktest-*) and free loopback ports. The ports come from
// outside the kernel's ephemeral range (so that a stopped server's port is
// not given to some outgoing connection before Start) and are reserved
// against other zktest servers on the machine for the Server's lifetime.
// Close kills the JVM, waits for it and removes the directory. On Linux a
// child JVM also gets SIGKILL when the test process dies (parent-death
// signal), so an aborted test run leaves no server running (only its
// temporary directory). Other Unix systems lack that guarantee.
//
// # Finding ZooKeeper
//
// If ZOOKEEPER_HOME is set, the jars in $ZOOKEEPER_HOME/lib (and
// $ZOOKEEPER_HOME itself) and $ZOOKEEPER_HOME/conf form the class path (an
// Apache binary release). Otherwise Debian's package is used:
// /usr/share/java/zookeeper.jar (whose manifest pulls in its dependencies)
// plus /usr/share/java/slf4j-simple.jar for a server log. Java is
// $JAVA_HOME/bin/java or the first java on PATH. When any of this is missing
// the constructors return an error wrapping [ErrNotInstalled] that names the
// fix (apt-get install -y zookeeper).
//
// # External ensemble
//
// If the environment variable ZK_CONNECT is set (for example
// "zk1:2181,zk2:2181"), [StartServer] does not start a JVM: it returns a
// Server in external mode whose ConnectString is ZK_CONNECT plus a fresh
// chroot "/zktest-<hex>" (created on the ensemble, and deleted with
// everything below it by Close), so tests sharing an ensemble do not see
// each other. Options are ignored, and Stop, Start and Restart return
// [ErrExternal]; FourLetter and the helpers built on it talk to the first
// host, and [ExpireSession] needs it to answer cons (see
// [Server.FourLetter]). A client going through a [Proxy] connects to
// proxy.Addr()+srv.Chroot(). [NewServer] and
// [NewCluster] always start local servers; [NewExternal] builds an external
// Server explicitly.
//
// Every ZooKeeper server started here uses a small tick (200 ms by default,
// see [WithTickTime]) so that tests can use 1-2 s sessions, checks container
// nodes every second (so reaped containers are observable in tests) and has
// extended types (TTL nodes) enabled.
package zktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// InstallHint is the command that installs what this package needs on a
// Debian or Ubuntu machine.
const InstallHint = "apt-get install -y zookeeper"

var (
	// ErrNotInstalled is returned (wrapped, with the install hint) when no
	// ZooKeeper or no Java is found.
	ErrNotInstalled = errors.New("zktest: ZooKeeper is not installed")
	// ErrExternal is returned by Stop, Start and Restart of a Server that
	// points at an external ensemble (ZK_CONNECT), which this package does
	// not control.
	ErrExternal = errors.New("zktest: server is external (ZK_CONNECT); it cannot be stopped or started")
	// ErrClosed is returned by operations on a closed Server or Cluster.
	ErrClosed = errors.New("zktest: closed")
)

// Option configures servers started by NewServer, StartServer, NewCluster
// and StartCluster (curator-test's InstanceSpec and its custom properties).
type Option func(*config)

type kv struct{ key, value string }

type config struct {
	tick         time.Duration
	heapMB       int
	production   bool // WithProductionJVM
	startTimeout time.Duration
	zooCfg       []kv // user additions/overrides, in order
	jvmProps     []kv
	errs         []error
}

// WithTickTime sets ZooKeeper's tickTime (default 200 ms; curator-test
// uses 1000 ms). The negotiated session timeout is bounded below by
// 2*tickTime, so a small tick lets tests use 1-2 s sessions. It is rounded
// down to whole milliseconds and must be at least 1 ms.
func WithTickTime(d time.Duration) Option {
	return func(c *config) {
		if d < time.Millisecond {
			c.errs = append(c.errs, fmt.Errorf("zktest: WithTickTime(%v): must be at least 1ms", d))
			return
		}
		c.tick = d
	}
}

// WithConfig adds the line key=value to zoo.cfg or replaces the default for
// key (for example WithConfig("maxSessionTimeout", "10000")). The keys that
// the harness manages (dataDir, clientPort, clientPortAddress, server.N,
// and 4lw.commands.whitelist: it needs the four-letter words) are rejected
// with an error from the constructor. Some knobs are Java
// system properties rather than zoo.cfg keys (znode.container.checkIntervalMs,
// for one); use WithJVMProperty for those.
func WithConfig(key, value string) Option {
	return func(c *config) {
		switch {
		case key == "" || strings.ContainsAny(key, "=\n\r") || strings.ContainsAny(value, "\n\r"):
			c.errs = append(c.errs, fmt.Errorf("zktest: WithConfig(%q, %q): invalid key or value", key, value))
		case managedKey(key):
			c.errs = append(c.errs, fmt.Errorf("zktest: WithConfig(%q): key is managed by zktest", key))
		default:
			c.zooCfg = setKV(c.zooCfg, key, value)
		}
	}
}

// WithJVMProperty passes -Dkey=value to the server JVM, replacing the
// default for key if there is one (for example
// WithJVMProperty("znode.container.checkIntervalMs", "500")).
func WithJVMProperty(key, value string) Option {
	return func(c *config) {
		if key == "" || strings.ContainsAny(key, "= \t\n\r") || strings.ContainsAny(value, "\n\r") {
			c.errs = append(c.errs, fmt.Errorf("zktest: WithJVMProperty(%q, %q): invalid key or value", key, value))
			return
		}
		c.jvmProps = setKV(c.jvmProps, key, value)
	}
}

// WithHeap sets the server JVM's maximum heap in MiB (default 256).
func WithHeap(mb int) Option {
	return func(c *config) {
		if mb < 16 {
			c.errs = append(c.errs, fmt.Errorf("zktest: WithHeap(%d): need at least 16 MiB", mb))
			return
		}
		c.heapMB = mb
	}
}

// WithProductionJVM starts the server's JVM as ZooKeeper's own scripts
// do, with the JVM's defaults (both JIT compilers, its default collector)
// and the heap of WithHeap reserved at start (-Xms = -Xmx), instead of the
// harness's start-up settings (the C1 compiler alone, the serial
// collector), which start sooner but serve each request with more CPU. For
// benchmarks: the server is then the one users run, and its CPU, shared
// with the clients' on a small machine, is not inflated (run some load
// first: its JIT compiles the hot code in the first seconds).
func WithProductionJVM() Option {
	return func(c *config) { c.production = true }
}

// WithStartTimeout bounds how long a constructor or Start waits for the
// server (or the quorum) to serve (default 30 s).
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Errorf("zktest: WithStartTimeout(%v): must be positive", d))
			return
		}
		c.startTimeout = d
	}
}

func newConfig(opts []Option) (*config, error) {
	c := &config{tick: 200 * time.Millisecond, heapMB: 256, startTimeout: 30 * time.Second}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return c, nil
}

func managedKey(k string) bool {
	switch k {
	case "dataDir", "clientPort", "clientPortAddress",
		"4lw.commands.whitelist": // the harness's start check, Sessions and ExpireSession ask four-letter words
		return true
	}
	return strings.HasPrefix(k, "server.")
}

func setKV(list []kv, key, value string) []kv {
	for i := range list {
		if list[i].key == key {
			list[i].value = value
			return list
		}
	}
	return append(list, kv{key, value})
}

// member describes one server's place in an ensemble (nil for standalone).
type member struct {
	id      int
	servers []string // "server.i=127.0.0.1:q:e" lines
}

// zooCfg renders zoo.cfg for a server with the given data dir and port.
func (c *config) renderZooCfg(dataDir string, port int, m *member) string {
	tickMs := int(c.tick / time.Millisecond)
	lines := []kv{
		{"tickTime", strconv.Itoa(tickMs)},
		// In ticks. Members are SIGKILLed, so their peers see the
		// sockets close and re-elect at once whatever these are; the
		// limits only bound how long a live but stalled member (a loaded
		// CI machine) may lag before the quorum breaks up.
		{"initLimit", "20"},
		{"syncLimit", "10"},
		{"minSessionTimeout", strconv.Itoa(2 * tickMs)},
		{"maxSessionTimeout", "60000"},
		{"maxClientCnxns", "0"},
		{"4lw.commands.whitelist", "*"},
		{"admin.enableServer", "false"},
		{"autopurge.purgeInterval", "0"},
		// The test servers are killed, never their machine: the page
		// cache keeps what was written, so fsync only costs time.
		{"forceSync", "no"},
	}
	if m != nil {
		lines = append(lines, kv{"standaloneEnabled", "false"}, kv{"reconfigEnabled", "false"})
	}
	for _, o := range c.zooCfg {
		lines = setKV(lines, o.key, o.value)
	}
	var b strings.Builder
	b.WriteString("# written by github.com/gocurator/curator/testing/zktest\n")
	fmt.Fprintf(&b, "dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n", dataDir, port)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s=%s\n", l.key, l.value)
	}
	if m != nil {
		for _, s := range m.servers {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

func (c *config) jvmArgs(inst *install, cfgPath string) []string {
	props := []kv{
		{"znode.container.checkIntervalMs", "1000"},
		{"zookeeper.extendedTypesEnabled", "true"},
		{"zookeeper.jmx.log4j.disable", "true"},
		{"zookeeper.admin.enableServer", "false"},
		// quorum connection attempts to a killed member fail fast anyway
		// on loopback; keep the worst case short too.
		{"zookeeper.cnxTimeout", "1000"},
	}
	if inst.slf4jSimple {
		props = append(props,
			kv{"org.slf4j.simpleLogger.defaultLogLevel", "info"},
			kv{"org.slf4j.simpleLogger.showDateTime", "true"},
			kv{"org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS"},
		)
	}
	for _, p := range c.jvmProps {
		props = setKV(props, p.key, p.value)
	}
	args := []string{fmt.Sprintf("-Xmx%dm", c.heapMB)}
	if c.production {
		args = append(args, fmt.Sprintf("-Xms%dm", c.heapMB))
	} else {
		args = append(args,
			"-XX:+UseSerialGC",        // fewer threads, quicker start on small machines
			"-XX:TieredStopAtLevel=1", // C1 only: faster start, plenty for tests
		)
	}
	args = append(args,
		"-XX:-UsePerfData", // no /tmp/hsperfdata_* files left behind
		"-Djava.awt.headless=true",
	)
	for _, p := range props {
		args = append(args, "-D"+p.key+"="+p.value)
	}
	return append(args, "-cp", inst.classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgPath)
}

// install is a located ZooKeeper + Java.
type install struct {
	java        string
	classpath   string
	slf4jSimple bool
}

func notInstalled(format string, args ...any) error {
	return fmt.Errorf("%w: %s; fix: %s (or set ZOOKEEPER_HOME to an Apache ZooKeeper release, or ZK_CONNECT to an existing ensemble)",
		ErrNotInstalled, fmt.Sprintf(format, args...), InstallHint)
}

// debianJavaDir is where Debian's zookeeper package puts its jars.
var debianJavaDir = "/usr/share/java"

func findZooKeeper() (*install, error) {
	inst := &install{}
	if home := os.Getenv("ZOOKEEPER_HOME"); home != "" {
		var jars []string
		for _, pat := range []string{filepath.Join(home, "lib", "*.jar"), filepath.Join(home, "*.jar")} {
			m, _ := filepath.Glob(pat)
			jars = append(jars, m...)
		}
		sort.Strings(jars)
		found := false
		for _, j := range jars {
			if strings.HasPrefix(filepath.Base(j), "zookeeper") {
				found = true
			}
		}
		if !found {
			return nil, notInstalled("ZOOKEEPER_HOME=%s has no zookeeper*.jar in lib/", home)
		}
		cp := []string{filepath.Join(home, "conf")}
		inst.classpath = strings.Join(append(cp, jars...), string(os.PathListSeparator))
	} else {
		zk := filepath.Join(debianJavaDir, "zookeeper.jar")
		if _, err := os.Stat(zk); err != nil {
			return nil, notInstalled("%s not found and ZOOKEEPER_HOME is not set", zk)
		}
		cp := []string{zk}
		if s := filepath.Join(debianJavaDir, "slf4j-simple.jar"); fileExists(s) {
			cp = append(cp, s)
			inst.slf4jSimple = true
		}
		// The jar's manifest leaves out two Netty jars that ZooKeeper's Netty
		// connection factory (and so its TLS client port) needs.
		for _, j := range []string{"netty-codec.jar", "netty-handler.jar"} {
			if s := filepath.Join(debianJavaDir, j); fileExists(s) {
				cp = append(cp, s)
			}
		}
		inst.classpath = strings.Join(cp, string(os.PathListSeparator))
	}
	if jh := os.Getenv("JAVA_HOME"); jh != "" && fileExists(filepath.Join(jh, "bin", "java")) {
		inst.java = filepath.Join(jh, "bin", "java")
	} else if j, err := exec.LookPath("java"); err == nil {
		inst.java = j
	} else {
		return nil, notInstalled("no java on PATH (the zookeeper package brings one)")
	}
	return inst, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
