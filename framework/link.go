package framework

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// link is one go-zookeeper connection (*zk.Conn) of a client, one
// generation, and the TCP connections it opens through our dialer. Seeing
// the bytes lets the client do what go-zookeeper v1.0.4 does not offer:
//   - read the session timeout the server granted (the ConnectResponse),
//   - close the sockets to make go-zookeeper's loop return at once when the
//     link is retired, even while it waits in its handshake (it would
//     otherwise wait up to 20/3 of the session timeout),
//   - hold back every request of a client configured with credentials until
//     they have been sent on that TCP connection: never a request as
//     anonymous,
//   - hold back the replies on a connection that resumes the session until
//     go-zookeeper has sent its watches again (sock.gate: a data race of
//     go-zookeeper's, go-zookeeper/zk#35).
type link struct {
	gen      int
	dial     Dialer
	needAuth int // credentials the client sends on each connection

	negotiated atomic.Int64 // ms granted in the latest handshake
	// watching reports that the client has armed watches, which
	// go-zookeeper then has too (see sock.gate).
	watching func() bool
	// traceGate, in tests, hears what the gate does with a packet:
	// "pass" or "hold" (and its xid).
	traceGate func(what string, xid int32)

	mu      sync.Mutex
	dead    bool
	socks   map[*sock]struct{}
	expects map[string]func() // create paths whose request someone waits to see written
	nexpect atomic.Int32      // len(expects), read without the lock on every write
}

// Op codes of ZooKeeper's protocol that the write gate lets through before
// the credentials (jute: ZooDefs.OpCode).
const (
	opPing    = 11
	opClose   = -11
	opSetAuth = 100
	// opSetWatches: go-zookeeper sets its watches again on a new connection
	// of the session (sock.gate).
	opSetWatches = 101
)

// errLinkClosed refuses a dial on a retired link.
var errLinkClosed = errors.New("framework: connection retired")

// errUnauthenticated refuses a request written before the credentials on a
// connection. It is wrapped in a *net.OpError, which the retry loop takes
// for a connection loss: the request is retried once authenticated.
var errUnauthenticated = errors.New("framework: request held back: credentials not yet sent on this connection")

func newLink(gen int, d Dialer, needAuth int) *link {
	return &link{gen: gen, dial: d, needAuth: needAuth, socks: map[*sock]struct{}{}, expects: map[string]func(){}}
}

// expect calls written, once, as soon as a create request for the server
// path full has been written on one of the link's connections (so that a
// request queued from then on is handled after it: ZooKeeper answers a
// session's requests in order). written runs on go-zookeeper's sending
// goroutine: it must not block. done removes the expectation; it reports
// whether written had been called (or is being called) before.
func (l *link) expect(full string, written func()) (done func() bool) {
	l.mu.Lock()
	l.expects[full] = written
	l.nexpect.Store(int32(len(l.expects)))
	l.mu.Unlock()
	return func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, waiting := l.expects[full]; waiting {
			delete(l.expects, full)
			l.nexpect.Store(int32(len(l.expects)))
			return false
		}
		return true
	}
}

// Op codes of creates (ZooDefs.OpCode: create, create2, createContainer,
// createTTL): their body starts with the path.
const (
	opCreate          = 1
	opCreate2         = 15
	opCreateContainer = 19
	opCreateTTL       = 21
)

// wrote tells an expectation that the create of a packet (length, xid, op
// code, body) is written.
func (l *link) wrote(p []byte) {
	if len(p) < 16 {
		return
	}
	switch int32(binary.BigEndian.Uint32(p[8:12])) {
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
	default:
		return
	}
	n := int(int32(binary.BigEndian.Uint32(p[12:16])))
	if n < 0 || 16+n > len(p) {
		return
	}
	path := string(p[16 : 16+n])
	l.mu.Lock()
	written := l.expects[path]
	if written != nil {
		delete(l.expects, path)
		l.nexpect.Store(int32(len(l.expects)))
	}
	l.mu.Unlock()
	if written != nil {
		written()
	}
}

// dialer is the zk.Dialer of the link's *zk.Conn.
func (l *link) dialer(network, address string, timeout time.Duration) (net.Conn, error) {
	l.mu.Lock()
	dead := l.dead
	l.mu.Unlock()
	if dead {
		return nil, errLinkClosed
	}
	nc, err := l.dial(network, address, timeout)
	if err != nil {
		return nil, err
	}
	s := &sock{Conn: nc, l: l, closed: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		nc.Close()
		return nil, errLinkClosed
	}
	if l.watching != nil && l.watching() {
		s.gate = make(chan struct{})
	}
	l.socks[s] = struct{}{}
	return s, nil
}

// kill retires the link: its sockets are closed and no new one is opened.
func (l *link) kill() {
	l.mu.Lock()
	l.dead = true
	socks := l.socks
	l.socks = map[*sock]struct{}{}
	l.mu.Unlock()
	for s := range socks {
		s.shut()
		s.Conn.Close()
	}
}

func (l *link) isDead() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dead
}

// timeout returns the session timeout granted in the latest handshake.
func (l *link) timeout() time.Duration {
	return time.Duration(l.negotiated.Load()) * time.Millisecond
}

// closeConn closes a go-zookeeper connection and waits until its goroutines
// are gone (its event channel is closed last). It is bounded by a small
// constant: go-zookeeper's Close waits at most 1 s for its close request,
// and closing the sockets ends whatever read its loop is blocked in.
func closeConn(conn *zk.Conn, evs <-chan zk.Event, l *link) {
	conn.Close()
	l.kill()
	for range evs {
	}
}

// sock is one TCP connection of a link.
type sock struct {
	net.Conn
	l *link

	// Read side, only go-zookeeper's reading goroutine (one at a time).
	hdr  [12]byte // length, protocolVersion, timeOut of the ConnectResponse
	nhdr int
	// Read-ahead: go-zookeeper reads each packet in two reads (its length,
	// then its body), each a system call on a bare connection. Reading
	// ahead takes a packet, and often the packets behind it (a watch event
	// and a reply), in one (issue 16: client CPU per acquisition).
	rbuf       []byte
	rpos, rend int

	// gate holds go-zookeeper's replies back on a connection that resumes
	// a session with watches, until go-zookeeper has written its
	// SetWatches request. go-zookeeper v1.0.4 builds that request from
	// c.lastZxid on its loop goroutine after it has started the
	// connection's receiving goroutine, which writes c.lastZxid on every
	// reply (xid >= 0), with no lock: a data race (go-zookeeper/zk#35,
	// samuel/go-zookeeper#260, unfixed in the release). A held reply is
	// read only after the request is written, so after c.lastZxid was
	// read. Other packets pass (events, pings, setAuth replies: their
	// xids are negative and go-zookeeper writes no c.lastZxid for them;
	// with credentials, go-zookeeper's sender waits for the setAuth
	// replies before it writes anything else).
	//
	// go-zookeeper sends SetWatches exactly when it keeps watches, and
	// then only on a connection that resumes its session (a new session
	// drops them all). We know its watches through ours: an armed watch of
	// the mux is one go-zookeeper keeps (it registers its own before our
	// read returns, and both drop it on the same event, ours first,
	// synchronously in its receiving goroutine). Hence the gate's
	// conditions: armed watches when the connection is dialled, and a
	// ConnectRequest with a session id. A mismatch we do not foresee costs
	// a wait bounded by gateBackstop, never a hang.
	gate     chan struct{} // nil: no gate; closed: open
	gateOnce sync.Once
	closed   chan struct{} // closed with the socket: ends a wait at the gate
	shutOnce sync.Once
	// Read side, while the gate is in force (not yet seen open).
	open   bool
	nread  int // bytes delivered so far
	pktEnd int // stream offset where the packet being delivered ends

	wmu     sync.Mutex
	greeted bool // the ConnectRequest is written
	auths   int  // setAuth requests written
}

// readAhead is the size of a socket's read-ahead buffer: a few packets of
// a lock's traffic; a larger read (a long listing) bypasses it.
const readAhead = 4096

// gateBackstop bounds a wait at the gate: a third of the session timeout
// (go-zookeeper's ping interval; its receive timeout is two thirds), at
// most 2 s.
func (s *sock) gateBackstop() time.Duration {
	d := s.l.timeout() / 3
	if d <= 0 || d > 2*time.Second {
		d = 2 * time.Second
	}
	return d
}

// openGate lets the replies through (sock.gate).
func (s *sock) openGate() { s.gateOnce.Do(func() { close(s.gate) }) }

// shut ends a wait at the gate: the socket is closed.
func (s *sock) shut() { s.shutOnce.Do(func() { close(s.closed) }) }

// admit runs at the start of each packet while the gate is in force: it
// lets the ConnectResponse and packets of negative xid through, and holds
// a reply until the gate opens, the socket closes (an error), or the
// backstop passes.
func (s *sock) admit() error {
	if err := s.peek(8); err != nil {
		return err
	}
	b := s.rbuf[s.rpos:s.rend]
	first := s.pktEnd == 0
	s.pktEnd = s.nread + 4 + int(binary.BigEndian.Uint32(b[0:4]))
	if first {
		return nil // the ConnectResponse
	}
	xid := int32(binary.BigEndian.Uint32(b[4:8]))
	trace := s.l.traceGate
	select {
	case <-s.gate:
		s.open = true
		return nil
	default:
	}
	if xid < 0 {
		if trace != nil {
			trace("pass", xid)
		}
		return nil
	}
	if trace != nil {
		trace("hold", xid)
	}
	t := time.NewTimer(s.gateBackstop())
	defer t.Stop()
	select {
	case <-s.gate:
	case <-s.closed:
		return net.ErrClosed // never a held reply once the socket is closed
	case <-t.C:
		s.openGate()
	}
	s.open = true
	return nil
}

// peek reads ahead until k bytes are buffered.
func (s *sock) peek(k int) error {
	if s.rbuf == nil {
		s.rbuf = make([]byte, readAhead)
	}
	if s.rend-s.rpos >= k {
		return nil
	}
	s.rend = copy(s.rbuf, s.rbuf[s.rpos:s.rend])
	s.rpos = 0
	for s.rend < k {
		m, err := s.Conn.Read(s.rbuf[s.rend:])
		s.rend += m
		if err != nil && s.rend < k {
			return err
		}
	}
	return nil
}

func (s *sock) Read(p []byte) (int, error) {
	var (
		n   int
		err error
	)
	if s.gate != nil && !s.open {
		if s.nread == s.pktEnd {
			if err := s.admit(); err != nil {
				return 0, err
			}
		}
		if !s.open && len(p) > s.pktEnd-s.nread {
			p = p[:s.pktEnd-s.nread] // not a byte of the next packet before its turn
		}
	}
	switch {
	case s.rpos < s.rend:
		n = copy(p, s.rbuf[s.rpos:s.rend])
		s.rpos += n
	case len(p) >= readAhead:
		n, err = s.Conn.Read(p)
	default:
		if s.rbuf == nil {
			s.rbuf = make([]byte, readAhead)
		}
		var m int
		m, err = s.Conn.Read(s.rbuf)
		s.rpos, s.rend = 0, m
		n = copy(p, s.rbuf[:m])
		s.rpos = n
	}
	if s.gate != nil && !s.open {
		s.nread += n
	}
	if s.nhdr < len(s.hdr) && n > 0 {
		s.nhdr += copy(s.hdr[s.nhdr:], p[:n])
		if s.nhdr == len(s.hdr) {
			s.l.negotiated.Store(int64(int32(binary.BigEndian.Uint32(s.hdr[8:12]))))
		}
	}
	return n, err
}

// Write passes go-zookeeper's packets (one per Write: length, xid, opcode,
// body), holding back any request but pings, close and setAuth until the
// client's credentials have been written on this connection. The server
// handles a setAuth as soon as it reads it and closes the connection if it
// refuses it, so nothing written after is handled as anonymous.
func (s *sock) Write(p []byte) (int, error) {
	s.wmu.Lock()
	if !s.greeted {
		s.greeted = true
		if s.gate != nil && len(p) >= 28 && binary.BigEndian.Uint64(p[20:28]) == 0 {
			s.openGate() // a new session: go-zookeeper has no watch to set again
		}
	} else if len(p) >= 12 {
		switch op := int32(binary.BigEndian.Uint32(p[8:12])); op {
		case opSetAuth:
			s.auths++
		case opPing, opClose:
		default:
			if s.auths < s.l.needAuth {
				s.wmu.Unlock()
				return 0, &net.OpError{Op: "write", Net: "tcp", Addr: s.RemoteAddr(), Err: errUnauthenticated}
			}
		}
	}
	s.wmu.Unlock()
	n, err := s.Conn.Write(p)
	if err == nil && s.gate != nil && len(p) >= 12 && int32(binary.BigEndian.Uint32(p[8:12])) == opSetWatches {
		s.openGate()
	}
	if err == nil && s.l.nexpect.Load() > 0 {
		s.l.wrote(p)
	}
	return n, err
}

func (s *sock) Close() error {
	s.shut()
	s.l.mu.Lock()
	delete(s.l.socks, s)
	s.l.mu.Unlock()
	return s.Conn.Close()
}
