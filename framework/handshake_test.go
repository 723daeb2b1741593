package framework_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// silentServer accepts connections and never answers: a ZooKeeper server
// still starting (its port open, its handshake not served yet).
type silentServer struct {
	ln       net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
	newSess  chan struct{} // closed at the first ConnectRequest for a new session
	sessOnce sync.Once
}

func startSilentServer(t *testing.T) *silentServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &silentServer{ln: ln, newSess: make(chan struct{})}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.close)
	return s
}

func (s *silentServer) addr() string { return s.ln.Addr().String() }

func (s *silentServer) serve() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, nc)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.read(nc)
	}
}

// read reads a ConnectRequest (length, protocolVersion, lastZxidSeen,
// timeOut, sessionId, ...) and notes one that asks for a new session; it
// answers nothing.
func (s *silentServer) read(nc net.Conn) {
	defer s.wg.Done()
	var b [28]byte
	if _, err := io.ReadFull(nc, b[:]); err == nil && binary.BigEndian.Uint64(b[20:28]) == 0 {
		s.sessOnce.Do(func() { close(s.newSess) })
	}
	io.Copy(io.Discard, nc) // until closed
}

func (s *silentServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Issue 38 item 5: a re-dial after the session is LOST whose TCP connect
// reaches a server still starting gives its handshake the connection
// timeout, not go-zookeeper's 10x its read timeout (66 s at 10 s
// sessions), and goes on to the next host. go-zookeeper shuffles the
// hosts: the dialer makes every new connection meet the silent server
// first (a dial to the real one fails until a handshake for a new session
// has reached the silent one), so the test does not depend on the order.
func TestRedialGoesPastAServerThatNeverAnswers(t *testing.T) {
	const (
		sessionTimeout = 10 * time.Second
		connTimeout    = time.Second
		zkHandshake    = 10 * sessionTimeout * 2 / 3 // go-zookeeper's: 10x its read timeout
	)
	fired, restore := framework.CaptureExpiryTimers()
	testenv.RestoreLater(t)(restore) // after the client is closed
	silent := startSilentServer(t)
	p := startProxyFor(t)
	var redialing atomic.Bool
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		switch {
		case addr == silent.addr() && !redialing.Load():
			return nil, errors.New("test: the first session is made through the real server")
		case addr == p.Addr() && redialing.Load() && !testenv.IsClosed(silent.newSess):
			return nil, errors.New("test: the server still starting is met first")
		}
		return net.DialTimeout(network, addr, timeout)
	}
	c, log := newRecordedClient(t, silent.addr()+","+p.Addr(), framework.WithDialer(dial),
		framework.WithSessionTimeout(sessionTimeout), framework.WithConnectionTimeout(connTimeout))
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	old := c.Session()

	p.Refuse(true)
	p.Drop()
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended)
	testenv.Recv(t, fired, testenv.WaitShort, "the expiry timer armed")()
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateLost)

	start := time.Now()
	redialing.Store(true)
	p.Refuse(false)
	bound := zkHandshake / 2 // generous: the fix takes a few connection timeouts
	log.wait(t, bound, framework.StateConnected, framework.StateSuspended, framework.StateLost, framework.StateReconnected)
	d := time.Since(start)
	t.Logf("connected %v after the re-dial began (connection timeout %v, go-zookeeper's handshake bound %v)", d, connTimeout, zkHandshake)
	if !testenv.IsClosed(silent.newSess) {
		t.Fatal("the re-dial never met the server still starting")
	}
	if s := c.Session(); s == nil || s.Lost() || s.ID() == old.ID() {
		t.Fatalf("session after the re-dial = %v, want a new live one", s)
	}
	if _, _, err := c.Exists(testenv.Ctx(t, testenv.WaitShort), "/"); err != nil {
		t.Fatal(err)
	}
}
