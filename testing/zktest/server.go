package zktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is one ZooKeeper server: a standalone server started by NewServer
// or StartServer (curator-test TestingServer), a member of a Cluster, or an
// external ensemble (see NewExternal). All methods are safe for concurrent
// use.
type Server struct {
	cfg    *config
	inst   *install
	dir    string // zoo.cfg, data/, zk.out
	ownDir string // removed by Close ("" for cluster members)
	port   int    // fixed once the constructor returns
	leases []*portLease
	member *member
	ext    *external

	opMu sync.Mutex // serializes Start, Stop and Close

	mu        sync.Mutex
	proc      *process
	closed    bool
	lastStart time.Duration
}

// NewServer starts a standalone ZooKeeper server on a free loopback port
// with a fresh temporary data directory and waits until it serves (at most
// 30 s by default, see WithStartTimeout). It is curator-test's
// TestingServer. It always starts a local server; StartServer honors
// ZK_CONNECT. If ZooKeeper or Java is missing, the error wraps
// ErrNotInstalled and names the fix.
func NewServer(opts ...Option) (*Server, error) {
	cfg, inst, root, err := prepare("zktest-", opts)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, inst: inst, dir: root, ownDir: root}
	if err := os.Mkdir(s.dataDir(), 0o755); err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("zktest: %w", err)
	}
	for attempt := 1; ; attempt++ {
		leases, err := reservePorts(1)
		if err != nil {
			os.RemoveAll(root)
			return nil, err
		}
		s.port, s.leases = leases[0].port, leases
		if err := s.writeConfig(); err != nil {
			releaseAll(leases)
			os.RemoveAll(root)
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), cfg.startTimeout)
		err = s.start(ctx, anyMode)
		cancel()
		if err == nil {
			return s, nil
		}
		releaseAll(leases)
		if errors.Is(err, errBind) && attempt < 5 {
			continue // somebody took the port between our pick and the JVM's bind
		}
		os.RemoveAll(root)
		return nil, err
	}
}

// StartServer is NewServer for tests: it calls tb.Fatal if the server
// cannot be started (the message names the fix when ZooKeeper is missing)
// and registers Close with tb.Cleanup. If the environment variable
// ZK_CONNECT is set it returns an external-mode Server instead (see
// NewExternal and the package documentation); opts are then ignored.
func StartServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	var (
		s   *Server
		err error
	)
	if conn := os.Getenv("ZK_CONNECT"); conn != "" {
		s, err = NewExternal(conn)
	} else {
		s, err = NewServer(opts...)
	}
	return started(tb, "server", s, err)
}

// started is the common end of StartServer and StartCluster: tb.Fatal on
// err (naming the fix when ZooKeeper is missing), else v's Close
// registered with tb.Cleanup.
func started[T interface{ Close() error }](tb testing.TB, what string, v T, err error) T {
	tb.Helper()
	if err != nil {
		if errors.Is(err, ErrNotInstalled) {
			tb.Fatalf("zktest: cannot start ZooKeeper %s: %v\n(install it with: %s)", what, err, InstallHint)
		}
		tb.Fatalf("zktest: cannot start ZooKeeper %s: %v", what, err)
	}
	tb.Cleanup(func() {
		if err := v.Close(); err != nil {
			tb.Errorf("zktest: closing %s: %v", what, err)
		}
	})
	return v
}

// prepare is what NewServer and NewCluster do first: the configuration,
// the ZooKeeper installation, and a fresh temporary directory.
func prepare(dirPrefix string, opts []Option) (*config, *install, string, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, nil, "", err
	}
	inst, err := findZooKeeper()
	if err != nil {
		return nil, nil, "", err
	}
	root, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, nil, "", fmt.Errorf("zktest: %w", err)
	}
	return cfg, inst, root, nil
}

func anyMode(string) bool { return true }

func quorumMode(mode string) bool {
	return mode == "leader" || mode == "follower" || mode == "observer"
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

// LogFile returns the path of the server's combined stdout/stderr log
// ("" for an external server). It is removed by Close.
func (s *Server) LogFile() string {
	if s.ext != nil {
		return ""
	}
	return filepath.Join(s.dir, "zk.out")
}

// Dir returns the server's directory (zoo.cfg, data/, zk.out); "" for an
// external server.
func (s *Server) Dir() string {
	if s.ext != nil {
		return ""
	}
	return s.dir
}

func (s *Server) writeConfig() error {
	cfg := s.cfg.renderZooCfg(s.dataDir(), s.port, s.member)
	if err := os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	if s.member != nil {
		if err := os.WriteFile(filepath.Join(s.dataDir(), "myid"), []byte(strconv.Itoa(s.member.id)+"\n"), 0o644); err != nil {
			return fmt.Errorf("zktest: %w", err)
		}
	}
	return nil
}

// launch starts the JVM without waiting for it to serve.
func (s *Server) launch() (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.proc != nil && !s.proc.exited() {
		return nil, fmt.Errorf("zktest: server on port %d is already running", s.port)
	}
	p, err := launch(s.inst, s.cfg, s.dir)
	if err != nil {
		return nil, err
	}
	s.proc = p
	return p, nil
}

// start launches the JVM and waits until it serves in a mode accepted by ok.
// On failure the JVM is killed.
func (s *Server) start(ctx context.Context, ok func(string) bool) error {
	p, err := s.launch()
	if err != nil {
		return err
	}
	return s.await(ctx, p, ok)
}

func (s *Server) await(ctx context.Context, p *process, ok func(string) bool) error {
	if err := waitServing(ctx, p, s.port, s.dataDir(), s.LogFile(), ok); err != nil {
		p.kill()
		return err
	}
	s.mu.Lock()
	s.lastStart = time.Since(p.started)
	s.mu.Unlock()
	return nil
}

// StartupTime returns how long the last successful start took, from
// launching the JVM to the server serving.
func (s *Server) StartupTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastStart
}

// ConnectString returns the client connect string, "127.0.0.1:PORT" (for
// an external server: ZK_CONNECT plus its chroot).
func (s *Server) ConnectString() string {
	if s.ext != nil {
		return s.ext.connect
	}
	return s.Addr()
}

// Addr returns the server's host:port ("127.0.0.1:PORT"; for an external
// server, the first host of ZK_CONNECT).
func (s *Server) Addr() string {
	if s.ext != nil {
		return s.ext.hosts[0]
	}
	return "127.0.0.1:" + strconv.Itoa(s.port)
}

// Port returns the client port (for an external server, the first host's).
func (s *Server) Port() int {
	if s.ext != nil {
		return s.ext.port
	}
	return s.port
}

// Running reports whether the server's JVM is running (true for an
// external server).
func (s *Server) Running() bool {
	if s.ext != nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.exited()
}

// Pid returns the process id of the server's JVM, 0 when it is not
// running or the server is external.
func (s *Server) Pid() int {
	if s.ext != nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Stop kills the server's JVM (SIGKILL; ZooKeeper is crash safe) and waits
// for it to exit, keeping its port and data so that Start can bring it
// back (curator-test TestingServer.stop / TestingCluster.killServer).
// Stopping a stopped or closed server does nothing.
func (s *Server) Stop() error { return s.op(func() error { s.stop(); return nil }) }

// op runs f under opMu, for a server of ours (ErrExternal for another).
func (s *Server) op(f func() error) error {
	if s.ext != nil {
		return ErrExternal
	}
	s.opMu.Lock()
	defer s.opMu.Unlock()
	return f()
}

func (s *Server) stop() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// Start starts a stopped server again with the same port, configuration
// and data and waits until it serves (a cluster member: until it has
// joined the quorum as leader or follower). If the port is briefly taken
// it retries until the start timeout (curator-test
// TestingServer.restart / TestingCluster.restartServer).
func (s *Server) Start() error { return s.op(s.startAgain) }

func (s *Server) startAgain() error {
	ok := anyMode
	if s.member != nil {
		ok = quorumMode
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.startTimeout)
	defer cancel()
	for {
		err := s.start(ctx, ok)
		if err == nil || !errors.Is(err, errBind) {
			return err
		}
		// The port is ours; something (often a client's self-connected
		// socket or a lingering connection) holds it for a moment.
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// Restart is Stop followed by Start.
func (s *Server) Restart() error { return s.op(func() error { s.stop(); return s.startAgain() }) }

// Resync stops a cluster member, removes its transaction logs and
// snapshots (its id stays) and starts it again, so that it takes the
// ensemble's data whole from the leader, and waits until it serves. It is
// the cure for a member whose data diverged from the others' (ZooKeeper
// 3.8.0, Debian's, can lose transactions on a member after a leader
// change: ZOOKEEPER-4712, ZOOKEEPER-4785). A standalone server has no
// leader to take its data from: Resync refuses it.
func (s *Server) Resync() error {
	return s.op(func() error {
		if s.member == nil {
			return errors.New("zktest: Resync of a standalone server (only a cluster member can take its data from a leader)")
		}
		s.stop()
		if err := os.RemoveAll(filepath.Join(s.dataDir(), "version-2")); err != nil {
			return fmt.Errorf("zktest: Resync: %w", err)
		}
		return s.startAgain()
	})
}

// Close stops the server and removes its temporary directory (for an
// external server: deletes its chroot). It is idempotent and leaves no
// process, file or goroutine behind. Closing a Cluster member only stops
// it; the Cluster removes the files.
func (s *Server) Close() error {
	if s.ext != nil {
		return s.ext.close()
	}
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	releaseAll(s.leases)
	if s.ownDir != "" {
		if err := os.RemoveAll(s.ownDir); err != nil {
			return fmt.Errorf("zktest: %w", err)
		}
	}
	return nil
}

// WithSessionTimeouts sets the servers' minSessionTimeout and
// maxSessionTimeout (zoo.cfg; the defaults here are 2*tickTime and 60 s).
// ZooKeeper grants a client the session timeout it asks for clamped into
// [min, max] (Server.SessionTimeoutFor says what a request becomes), so a
// small max makes a server hand out short sessions whatever the client
// asks, as production ensembles often do. Both are rounded down to whole
// milliseconds; min must be at least 1 ms and max at least min.
func WithSessionTimeouts(lo, hi time.Duration) Option {
	return func(c *config) {
		if lo < time.Millisecond || hi < lo {
			c.errs = append(c.errs, fmt.Errorf("zktest: WithSessionTimeouts(%v, %v): need 1ms <= min <= max", lo, hi))
			return
		}
		c.zooCfg = setKV(c.zooCfg, "minSessionTimeout", strconv.FormatInt(lo.Milliseconds(), 10))
		c.zooCfg = setKV(c.zooCfg, "maxSessionTimeout", strconv.FormatInt(hi.Milliseconds(), 10))
	}
}

// SessionTimeoutFor returns the session timeout the server grants a client
// that asks for requested: requested clamped into the server's
// [minSessionTimeout, maxSessionTimeout] (ZooKeeperServer's negotiation;
// a bound of -1 or none means 2*tickTime and 20*tickTime). For an external
// server the bounds are read with the conf four-letter word.
func (s *Server) SessionTimeoutFor(requested time.Duration) (time.Duration, error) {
	var get func(key string) string
	if s.ext != nil {
		conf, err := s.FourLetter("conf")
		if err != nil {
			return 0, err
		}
		vals := map[string]string{}
		for _, line := range strings.Split(conf, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
				vals[k] = v
			}
		}
		get = func(key string) string { return vals[key] }
	} else {
		tickMs := int(s.cfg.tick / time.Millisecond)
		vals := map[string]string{"tickTime": strconv.Itoa(tickMs), "minSessionTimeout": strconv.Itoa(2 * tickMs), "maxSessionTimeout": "60000"}
		for _, o := range s.cfg.zooCfg {
			vals[o.key] = o.value
		}
		get = func(key string) string { return vals[key] }
	}
	ms := func(key string, ticks int64) (int64, error) {
		v := strings.TrimSpace(get(key))
		if v == "" || v == "-1" {
			tick, err := strconv.ParseInt(strings.TrimSpace(get("tickTime")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("zktest: server tickTime %q: %w", get("tickTime"), err)
			}
			return ticks * tick, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("zktest: server %s %q: %w", key, v, err)
		}
		return n, nil
	}
	lo, err := ms("minSessionTimeout", 2)
	if err != nil {
		return 0, err
	}
	hi, err := ms("maxSessionTimeout", 20)
	if err != nil {
		return 0, err
	}
	got := min(max(requested.Milliseconds(), lo), hi)
	return time.Duration(got) * time.Millisecond, nil
}
