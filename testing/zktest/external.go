package zktest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// external is the state of a Server in external mode.
type external struct {
	hosts   []string // host:port
	port    int      // first host's port
	chroot  string   // "/base/zktest-<hex>"
	connect string   // hosts joined + chroot

	mu     sync.Mutex
	closed bool
}

// NewExternal returns a Server in external mode for an existing ensemble
// (this is what StartServer does when ZK_CONNECT is set). connect is
// "host:port,host:port[/chroot]"; a host without a port gets 2181. A fresh
// chroot "/zktest-<16 hex digits>" is appended to connect and created (with
// its parents) on the ensemble; Close deletes it and everything below it.
// ConnectString returns the connect string with the chroot; clients that
// do not understand chroot suffixes can use Chroot as a path prefix.
// Stop, Start and Restart return ErrExternal; FourLetter talks to the first
// host.
func NewExternal(connect string) (*Server, error) {
	hostPart, base := connect, ""
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		hostPart, base = connect[:i], strings.TrimRight(connect[i:], "/")
	}
	var hosts []string
	for _, h := range strings.Split(hostPart, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, "2181")
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("zktest: external connect string %q has no host", connect)
	}
	if base != "" && (path.Clean(base) != base || strings.Contains(base, "//")) {
		return nil, fmt.Errorf("zktest: external connect string %q: bad chroot %q", connect, base)
	}
	_, portStr, _ := net.SplitHostPort(hosts[0])
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("zktest: external connect string %q: bad port %q", connect, portStr)
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	e := &external{hosts: hosts, port: port, chroot: base + "/zktest-" + hex.EncodeToString(rnd[:])}
	e.connect = strings.Join(hosts, ",") + e.chroot
	if err := e.withConn(func(c *zk.Conn) error {
		p := ""
		for _, part := range strings.Split(strings.TrimPrefix(e.chroot, "/"), "/") {
			p += "/" + part
			if _, err := c.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return fmt.Errorf("creating chroot %s: %w", p, err)
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("zktest: external ensemble %s: %w", connect, err)
	}
	return &Server{ext: e}, nil
}

// Chroot returns the chroot of an external server ("/zktest-<hex>", below
// the chroot of ZK_CONNECT if it had one), "" for a local server.
func (s *Server) Chroot() string {
	if s.ext == nil {
		return ""
	}
	return s.ext.chroot
}

// External reports whether s is an external ensemble (ZK_CONNECT).
func (s *Server) External() bool { return s.ext != nil }

func (e *external) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.withConn(func(c *zk.Conn) error { return deleteAll(c, e.chroot) })
	if err != nil {
		return fmt.Errorf("zktest: deleting chroot %s: %w", e.chroot, err)
	}
	return nil
}

func deleteAll(c *zk.Conn, p string) error {
	children, _, err := c.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ch := range children {
		if err := deleteAll(c, p+"/"+ch); err != nil {
			return err
		}
	}
	if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// withConn runs f with a session to the external ensemble and closes it,
// waiting for the client's goroutines to end.
func (e *external) withConn(f func(*zk.Conn) error) error {
	c, events, err := zk.Connect(e.hosts, 10*time.Second, zk.WithLogger(nopLogger{}), zk.WithLogInfo(false))
	if err != nil {
		return err
	}
	defer func() {
		c.Close()
		for range events { // closed when the client's loop has ended
		}
	}()
	timeout := time.NewTimer(15 * time.Second)
	defer timeout.Stop()
	for c.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-timeout.C:
			return fmt.Errorf("no session with %s after 15s", strings.Join(e.hosts, ","))
		}
	}
	return f(c)
}
