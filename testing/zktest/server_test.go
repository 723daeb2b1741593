package zktest_test

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

func TestServerRestartKeepsData(t *testing.T) {
	t.Parallel()
	// Always a local server, even with ZK_CONNECT set: this test restarts it.
	s, err := zktest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t.Logf("standalone server serving after %v", s.StartupTime())
	if mode, err := s.Mode(); err != nil || mode != "standalone" {
		t.Fatalf("Mode = %q, %v; want standalone", mode, err)
	}
	if err := s.Resync(); err == nil || !s.Running() {
		t.Fatalf("Resync of a standalone server: %v, running %v; want an error, and the server untouched", err, s.Running())
	}
	if s.ConnectString() != s.Addr() || !strings.HasSuffix(s.Addr(), ":"+strconv.Itoa(s.Port())) {
		t.Fatalf("ConnectString %q, Addr %q, Port %d disagree", s.ConnectString(), s.Addr(), s.Port())
	}

	c := connect(t, s.ConnectString(), 2*time.Second)
	if _, err := c.Create("/kept", []byte("data"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.close()

	port := s.Port()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.Running() || s.Pid() != 0 {
		t.Fatal("server still running after Stop")
	}
	if _, err := s.Mode(); err == nil {
		t.Fatal("Mode succeeded on a stopped server")
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if s.Port() != port {
		t.Fatalf("port changed from %d to %d", port, s.Port())
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart: serving after %v", s.StartupTime())

	c = connect(t, s.ConnectString(), 2*time.Second)
	got, _, err := c.Get("/kept")
	if err != nil || string(got) != "data" {
		t.Fatalf("Get(/kept) after restart = %q, %v; want \"data\"", got, err)
	}
}

func TestCloseRemovesEverything(t *testing.T) {
	t.Parallel()
	s, err := zktest.NewServer(zktest.WithTickTime(100*time.Millisecond), zktest.WithHeap(128),
		zktest.WithConfig("maxSessionTimeout", "5000"), zktest.WithJVMProperty("znode.container.checkIntervalMs", "500"))
	if err != nil {
		t.Fatal(err)
	}
	dir, pid := s.Dir(), s.Pid()
	if pid == 0 {
		t.Fatal("no pid for a running server")
	}
	cfg, err := os.ReadFile(dir + "/zoo.cfg")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tickTime=100\n", "minSessionTimeout=200\n", "maxSessionTimeout=5000\n", "4lw.commands.whitelist=*\n"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("zoo.cfg lacks %q:\n%s", want, cfg)
		}
	}
	if conf, err := s.FourLetter("conf"); err != nil || !strings.Contains(conf, "maxSessionTimeout=5000") {
		t.Errorf("conf = %q, %v", conf, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory %s still there after Close: %v", dir, err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Close: %v", pid, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Start(); !errors.Is(err, zktest.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
}

func TestFourLetterWords(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	c := connect(t, s.ConnectString(), 2*time.Second)
	sid := c.SessionID()
	if _, err := c.Create("/w", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW("/w"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.WatchCount(); err != nil || n != 1 {
		t.Fatalf("WatchCount = %d, %v; want 1", n, err)
	}
	byPath, err := s.WatchesByPath()
	if err != nil || !containsID(byPath["/w"], sid) {
		t.Fatalf("WatchesByPath = %v, %v; want /w watched by 0x%x", byPath, err, sid)
	}
	bySession, err := s.WatchesBySession()
	if err != nil || len(bySession[sid]) != 1 || bySession[sid][0] != "/w" {
		t.Fatalf("WatchesBySession = %v, %v; want 0x%x -> [/w]", bySession, err, sid)
	}
	ids, err := s.Sessions()
	if err != nil || len(ids) != 1 || ids[0] != sid {
		t.Fatalf("Sessions = %x, %v; want [%x]", ids, err, sid)
	}
	m, err := s.Mntr()
	if err != nil || m["zk_server_state"] != "standalone" || m["zk_watch_count"] != "1" {
		t.Fatalf("Mntr: state %q watches %q, %v", m["zk_server_state"], m["zk_watch_count"], err)
	}
	if r, err := s.FourLetter("ruok"); err != nil || r != "imok" {
		t.Fatalf("ruok = %q, %v", r, err)
	}
	if _, err := s.FourLetter("toolong"); err == nil {
		t.Fatal("FourLetter accepted a five-letter word")
	}
}

func TestContainerAndTTLEnabled(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	c := connect(t, s.ConnectString(), 2*time.Second)
	acl := zk.WorldACL(zk.PermAll)
	if _, err := c.CreateContainer("/box", nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/box/x", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/box/x", -1); err != nil {
		t.Fatal(err)
	}
	// checked every second by default: an emptied container goes soon
	testenv.Eventually(t, testenv.WaitShort, "condition", func() error {
		if ok, _, err := c.Exists("/box"); err != nil || ok {
			return errors.New("container still there")
		}
		return nil
	})
	if _, err := c.CreateTTL("/ttl", nil, zk.FlagTTL, acl, time.Minute); err != nil {
		t.Fatalf("TTL node: %v", err)
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("ZOOKEEPER_HOME", t.TempDir())
	t.Setenv("ZK_CONNECT", "")
	_, err := zktest.NewServer()
	if !errors.Is(err, zktest.ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install -y zookeeper") {
		t.Fatalf("NewServer with empty ZOOKEEPER_HOME = %v; want ErrNotInstalled with the install hint", err)
	}
	if _, err := zktest.NewCluster(3); !errors.Is(err, zktest.ErrNotInstalled) {
		t.Fatalf("NewCluster with empty ZOOKEEPER_HOME = %v; want ErrNotInstalled", err)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1} {
		if c, err := zktest.NewCluster(n); err == nil {
			c.Close()
			t.Errorf("NewCluster(%d) succeeded", n)
		}
	}
	for name, opt := range map[string]zktest.Option{
		"tick":    zktest.WithTickTime(0),
		"heap":    zktest.WithHeap(0),
		"managed": zktest.WithConfig("clientPort", "1"),
		"server":  zktest.WithConfig("server.1", "x"),
		"4lw":     zktest.WithConfig("4lw.commands.whitelist", "srvr,ruok"),
		"newline": zktest.WithConfig("a", "b\nc=d"),
		"jvm":     zktest.WithJVMProperty("", "x"),
		"timeout": zktest.WithStartTimeout(-time.Second),
	} {
		if s, err := zktest.NewServer(opt); err == nil {
			s.Close()
			t.Errorf("%s: NewServer accepted a bad option", name)
		}
	}
	if _, err := zktest.NewProxy("no-port"); err == nil {
		t.Error("NewProxy accepted a target without port")
	}
}

func TestExternal(t *testing.T) {
	local := zktest.StartServer(t)
	t.Setenv("ZK_CONNECT", local.ConnectString()+"/base")
	s := zktest.StartServer(t)
	if !s.External() {
		t.Fatal("ZK_CONNECT set but the server is not external")
	}
	prefix := local.Addr() + "/base/zktest-"
	if !strings.HasPrefix(s.ConnectString(), prefix) || s.Chroot() != strings.TrimPrefix(s.ConnectString(), local.Addr()) {
		t.Fatalf("ConnectString %q, Chroot %q; want prefix %q", s.ConnectString(), s.Chroot(), prefix)
	}
	for _, err := range []error{s.Stop(), s.Start(), s.Restart()} {
		if !errors.Is(err, zktest.ErrExternal) {
			t.Fatalf("got %v, want ErrExternal", err)
		}
	}
	if s.Addr() != local.Addr() || s.Port() != local.Port() {
		t.Fatalf("Addr %s Port %d; want the first host %s", s.Addr(), s.Port(), local.Addr())
	}
	if mode, err := s.Mode(); err != nil || mode != "standalone" {
		t.Fatalf("Mode = %q, %v", mode, err)
	}
	c := connect(t, local.ConnectString(), 2*time.Second)
	if _, err := c.Create(s.Chroot()+"/child", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("chroot %s not usable: %v", s.Chroot(), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := c.Exists(s.Chroot()); err != nil || ok {
		t.Fatalf("chroot still exists after Close (%v, %v)", ok, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestProductionJVM: WithProductionJVM drops the start-up settings (C1
// alone, the serial collector) and reserves the heap; the server serves.
func TestProductionJVM(t *testing.T) {
	t.Parallel()
	s, err := zktest.NewServer(zktest.WithProductionJVM(), zktest.WithHeap(128))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(b), "\x00")
	for _, want := range []string{"-Xmx128m", "-Xms128m"} {
		if !slices.Contains(args, want) {
			t.Errorf("JVM arguments lack %s: %q", want, args)
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-XX:TieredStopAtLevel") || strings.HasPrefix(a, "-XX:+UseSerialGC") {
			t.Errorf("JVM argument %s of the start-up settings in a production JVM: %q", a, args)
		}
	}
	c := connect(t, s.ConnectString(), 2*time.Second)
	if _, err := c.Create("/served", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create on a production JVM: %v", err)
	}
}
