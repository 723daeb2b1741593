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
//   - bound each server's handshake by the connection timeout, so that a
//     server that accepts but does not answer yet (still starting) costs
//     that, not go-zookeeper's 10x its read timeout, before the next host
//     is tried (sock.bound),
//   - hold back every request of a client configured with credentials until
//     they have been sent on that TCP connection: never a request as
//     anonymous,
//   - keep the session's watches itself, go-zookeeper holding none (see
//     wirewatch.go: a data race of go-zookeeper's, go-zookeeper/zk#35),
//   - know when the last request the server answered was sent (lastSent),
//     from which the client counts the session timeout when disconnected:
//     the server counts it from the last request it received, which it
//     received no earlier.
type link struct {
	gen       int
	dial      Dialer
	needAuth  int           // credentials the client sends on each connection
	reads     *watchReads   // the client's watched reads under way
	persist   *persistReg   // the client's persistent watches (persistent.go)
	handshake time.Duration // bounds each socket's handshake, from its dial (0: go-zookeeper's)

	negotiated atomic.Int64 // ms granted in the latest handshake
	lastZxid   atomic.Int64 // of the latest reply read: SetWatches' relative zxid
	lastSent   atomic.Int64 // monoNow when the latest request answered was sent (0: none yet)

	mu       sync.Mutex
	dead     bool
	socks    map[*sock]struct{}
	expects  map[string]*expectation // create paths whose request someone waits to see written
	nexpect  atomic.Int32            // len(expects), read without the lock on every write
	pending  map[int32]watchKey      // xids of watched reads written, until answered
	npending atomic.Int32            // len(pending), read without the lock on every reply
	held     map[watchKey]struct{}   // the session's watches, as the server holds them
	cur      *sock                   // the connection whose handshake is done, for own requests (ownreq.go); nil if none
	ownSeq   atomic.Uint32           // numbers own requests (ownreq.go)
}

// Op codes of ZooKeeper's protocol that the write gate lets through before
// the credentials (jute: ZooDefs.OpCode), and SetWatches.
const (
	opPing       = 11
	opClose      = -11
	opSetAuth    = 100
	opSetWatches = 101
)

// watchEventXid is the xid of a watch event: the one packet from the
// server that answers no request.
const watchEventXid = -1

// errLinkClosed refuses a dial on a retired link.
var errLinkClosed = errors.New("framework: connection retired")

// errUnauthenticated refuses a request written before the credentials on a
// connection. It is wrapped in a *net.OpError, which the retry loop takes
// for a connection loss: the request is retried once authenticated.
var errUnauthenticated = errors.New("framework: request held back: credentials not yet sent on this connection")

func newLink(gen int, d Dialer, needAuth int, reads *watchReads, persist *persistReg) *link {
	return &link{gen: gen, dial: d, needAuth: needAuth, reads: reads, persist: persist,
		socks: map[*sock]struct{}{}, expects: map[string]*expectation{},
		pending: map[int32]watchKey{}, held: map[watchKey]struct{}{}}
}

// expect calls written, once, as soon as a create request for the server
// path full is about to be written on one of the link's connections: right
// before the write, on go-zookeeper's one sending goroutine, so that a
// request queued from then on is written after it, on the same connection,
// and handled after it (ZooKeeper answers a session's requests in order).
// written must not block. done removes the expectation; it reports whether
// written had been called (or is being called) before.
//
// The expectation also takes the zxid of the create's reply (its
// transaction's, from the reply header: Created.Zxid), once read: the
// create's send stamp carries it to the reply (sock.replied).
func (l *link) expect(full string, written func()) (e *expectation, done func() bool) {
	e = &expectation{written: written}
	l.mu.Lock()
	l.expects[full] = e
	l.nexpect.Store(int32(len(l.expects)))
	l.mu.Unlock()
	return e, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.expects[full] == e {
			delete(l.expects, full)
			l.nexpect.Store(int32(len(l.expects)))
			return false
		}
		return true
	}
}

// expectation is a create someone waits to see written (expect), and the
// zxid of its reply.
type expectation struct {
	written func()
	zxid    atomic.Int64 // the reply's transaction zxid, once read; 0 if not (or a failed create)
}

// Op codes of creates (ZooDefs.OpCode: create, create2, createContainer,
// createTTL): their body starts with the path.
const (
	opCreate          = 1
	opCreate2         = 15
	opCreateContainer = 19
	opCreateTTL       = 21
)

// writing tells an expectation that the create of a packet (length, xid,
// op code, body) is about to be written, and returns it (nil if none).
func (l *link) writing(p []byte) *expectation {
	if len(p) < 16 {
		return nil
	}
	switch int32(binary.BigEndian.Uint32(p[8:12])) {
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
	default:
		return nil
	}
	n := int(int32(binary.BigEndian.Uint32(p[12:16])))
	if n < 0 || 16+n > len(p) {
		return nil
	}
	path := string(p[16 : 16+n])
	l.mu.Lock()
	e := l.expects[path]
	if e != nil {
		delete(l.expects, path)
		l.nexpect.Store(int32(len(l.expects)))
	}
	l.mu.Unlock()
	if e != nil {
		e.written()
	}
	return e
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
	s := &sock{Conn: nc, l: l, own: map[int32]*ownCall{}}
	if l.handshake > 0 {
		s.shakeBy = time.Now().Add(l.handshake)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		nc.Close()
		return nil, errLinkClosed
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
	l.cur = nil
	l.mu.Unlock()
	for s := range socks {
		s.failOwn()
		s.Conn.Close()
	}
}

func (l *link) isDead() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dead
}

// monoBase and monoNow are the clock of link.lastSent: monotonic
// nanoseconds, never 0 once the process runs.
var monoBase = time.Now().Add(-time.Second)

func monoNow() int64 { return int64(time.Since(monoBase)) }

// lastAnswered returns how long ago the latest request answered on the
// link (a ConnectRequest, a ping, any request) was sent, and false if none
// was. The server received that request no earlier, so it cannot expire
// the session sooner than its timeout after that instant: a client that
// counts the timeout from here declares the session lost no later than
// the server can expire it (issue 38), whenever it notices the disconnect.
func (l *link) lastAnswered() (time.Duration, bool) {
	at := l.lastSent.Load()
	if at == 0 {
		return 0, false
	}
	return time.Duration(monoNow() - at), true
}

// noteAnswered records that a request sent at monoNow sent was answered.
// Replies of one connection are read in turn, but a retired connection's
// reader may still be at its last packet: the latest sending wins.
func (l *link) noteAnswered(sent int64) {
	for {
		old := l.lastSent.Load()
		if sent <= old || l.lastSent.CompareAndSwap(old, sent) {
			return
		}
	}
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

	// Read side, only go-zookeeper's reading goroutine (one at a time: its
	// loop goroutine reads the ConnectResponse, then the connection's
	// receiving goroutine the rest). Reads stop at packet boundaries
	// (go-zookeeper reads each packet in two reads: its length, then its
	// body), so each packet's header is seen before go-zookeeper's.
	// Read-ahead: each of those reads would be a system call on a bare
	// connection; reading ahead takes a packet, and often the packets
	// behind it (a watch event and a reply), in one (issue 16: client CPU
	// per acquisition).
	rbuf       []byte
	rpos, rend int
	left       int  // bytes of the current packet not yet delivered
	greeted    bool // the ConnectResponse has been seen

	shakeBy time.Time   // the handshake's deadline (zero: none of ours)
	shaken  atomic.Bool // the ConnectResponse has been delivered whole

	// When each request written and not yet answered was sent, in the order
	// written; the reply of an xid takes the earliest of that xid (the
	// server answers a session's requests in order, but a setAuth at once,
	// and pings all have xid -2). Written on go-zookeeper's sending
	// goroutine (and by handshake), taken on the reading one.
	smu      sync.Mutex
	inflight []sendStamp
	head     int          // inflight[:head] are taken
	connSent atomic.Int64 // monoNow when the ConnectRequest was written

	wmu       sync.Mutex
	sent      bool     // the ConnectRequest is written
	sid       int64    // the session id it asked to resume (0: a new session)
	auths     int      // setAuth requests written
	afterAuth [][]byte // SetWatches to write once the credentials are

	ownMu   sync.Mutex
	own     map[int32]*ownCall // own requests written, by xid, until answered (ownreq.go)
	ownDead bool               // the connection is gone: no own request is written on it
}

// sendStamp is when the request of an xid was written, and the expected
// create it is, if any (its reply's zxid goes there).
type sendStamp struct {
	xid int32
	at  int64 // monoNow
	exp *expectation
}

// stamp records that the request p (length, xid, ...) is being written:
// before the write, so that its reply cannot be read first. exp: the
// expected create p is (nil if none).
func (s *sock) stamp(p []byte, exp *expectation) {
	if len(p) < 8 {
		return
	}
	st := sendStamp{xid: int32(binary.BigEndian.Uint32(p[4:8])), at: monoNow(), exp: exp}
	s.smu.Lock()
	if s.head > 0 && len(s.inflight) == cap(s.inflight) {
		s.inflight = s.inflight[:copy(s.inflight, s.inflight[s.head:])]
		s.head = 0
	}
	s.inflight = append(s.inflight, st)
	s.smu.Unlock()
}

// replied takes the sending time of the request that a reply of xid
// answers (the earliest written of that xid) and records it on the link;
// the reply of an expected create gives it its zxid (err: the reply's
// error code, 0 for success).
func (s *sock) replied(xid int32, zxid int64, err int32) {
	s.smu.Lock()
	at := int64(0)
	for i := s.head; i < len(s.inflight); i++ {
		if s.inflight[i].xid != xid {
			continue
		}
		at = s.inflight[i].at
		if e := s.inflight[i].exp; e != nil && err == 0 {
			e.zxid.Store(zxid)
		}
		if i == s.head {
			s.head++
		} else {
			s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
		}
		if s.head == len(s.inflight) {
			s.inflight, s.head = s.inflight[:0], 0
		}
		break
	}
	s.smu.Unlock()
	if at != 0 {
		s.l.noteAnswered(at)
	}
}

// readAhead is the size of a socket's read-ahead buffer: a few packets of
// a lock's traffic; a larger read (a long listing) bypasses it.
const readAhead = 4096

// maxEvent bounds the watch event read whole ahead of go-zookeeper (a
// length beyond it is no event of a path: go-zookeeper handles the packet).
const maxEvent = 1 << 20

// peek reads ahead until k bytes are buffered.
func (s *sock) peek(k int) error {
	if len(s.rbuf) < k {
		b := make([]byte, max(k, readAhead))
		s.rend = copy(b, s.rbuf[s.rpos:s.rend])
		s.rbuf, s.rpos = b, 0
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

// packet starts the next packet: it reads its header and acts on it. A
// reply to our own SetWatches is read and dropped here: go-zookeeper never
// sees it.
func (s *sock) packet() error {
	if err := s.peek(4); err != nil {
		return err
	}
	total := 4 + int(binary.BigEndian.Uint32(s.rbuf[s.rpos:]))
	if err := s.peek(min(total, 20)); err != nil {
		return err
	}
	h := s.rbuf[s.rpos:s.rend]
	if !s.greeted {
		s.greeted = true
		return s.handshake(h, total)
	}
	s.left = total
	if total < 20 {
		return nil // not a reply: go-zookeeper will say so
	}
	xid := int32(binary.BigEndian.Uint32(h[4:8]))
	if xid != watchEventXid {
		s.replied(xid, int64(binary.BigEndian.Uint64(h[8:16])), int32(binary.BigEndian.Uint32(h[16:20])))
	}
	switch {
	case xid >= 0:
		if z := int64(binary.BigEndian.Uint64(h[8:16])); z > 0 {
			s.l.lastZxid.Store(z)
		}
		if s.l.npending.Load() > 0 {
			s.l.answered(xid, int32(binary.BigEndian.Uint32(h[16:20])))
		}
	case xid == watchEventXid && total <= maxEvent: // a watch event: type, state, path
		if err := s.peek(total); err != nil {
			return err
		}
		b := s.rbuf[s.rpos+20 : s.rpos+total]
		if len(b) >= 12 {
			n := int(int32(binary.BigEndian.Uint32(b[8:12])))
			if n >= 0 && 12+n <= len(b) {
				s.l.fired(int32(binary.BigEndian.Uint32(b[0:4])), b[12:12+n])
			}
		}
	case xid == setWatchesXid:
		if code := int32(binary.BigEndian.Uint32(h[16:20])); code != 0 {
			s.l.persist.refused(code) // the watches are not set again: say so (persistent.go)
		}
		s.left = 0
		return s.skip(total)
	case isOwnXid(xid): // an own request's reply (ownreq.go): go-zookeeper never sees it
		if z := int64(binary.BigEndian.Uint64(h[8:16])); z > 0 {
			s.l.lastZxid.Store(z) // seen by the client all the same (see resumeZxid)
		}
		s.left = 0
		return s.ownReply(xid, int32(binary.BigEndian.Uint32(h[16:20])), total)
	}
	return nil
}

// skip drops n bytes of the stream.
func (s *sock) skip(n int) error {
	for n > 0 {
		if s.rpos == s.rend {
			if err := s.peek(1); err != nil {
				return err
			}
		}
		k := min(n, s.rend-s.rpos)
		s.rpos += k
		n -= k
	}
	return nil
}

// handshake reads the ConnectResponse (length, protocolVersion, timeOut,
// sessionID, ...): the session timeout granted, and whether the session
// was resumed, in which case its watches are set again (wirewatch.go),
// before any request of go-zookeeper's, or right behind the credentials.
func (s *sock) handshake(h []byte, total int) error {
	s.left = total
	if len(h) < 20 {
		return nil
	}
	if at := s.connSent.Load(); at != 0 {
		s.l.noteAnswered(at) // the server touched the session on reading the ConnectRequest
	}
	if t := int32(binary.BigEndian.Uint32(h[8:12])); t > 0 {
		s.l.negotiated.Store(int64(t))
	}
	sid := int64(binary.BigEndian.Uint64(h[12:20]))
	s.wmu.Lock()
	defer s.wmu.Unlock()
	resumed := sid != 0 && sid == s.sid
	pkts, persistent := s.l.started(resumed)
	s.l.mu.Lock()
	if !s.l.dead {
		s.l.cur = s
	}
	s.l.mu.Unlock()
	if persistent {
		// Persistent watches do not replay what changed while disconnected
		// (ZOOKEEPER-4655): their owners are told they may have missed
		// events, here, before any event of this connection is read.
		s.l.persist.resumed()
	}
	if s.auths < s.l.needAuth {
		s.afterAuth = pkts
		return nil
	}
	return s.writeAll(pkts)
}

func (s *sock) writeAll(pkts [][]byte) error {
	for _, p := range pkts {
		s.stamp(p, nil)
		if _, err := s.Conn.Write(p); err != nil {
			return err
		}
	}
	return nil
}

func (s *sock) Read(p []byte) (int, error) {
	for s.left == 0 {
		if err := s.packet(); err != nil {
			return 0, err
		}
	}
	if len(p) > s.left {
		p = p[:s.left] // not a byte of the next packet before its header is seen
	}
	var (
		n   int
		err error
	)
	switch {
	case s.rpos < s.rend:
		n = copy(p, s.rbuf[s.rpos:s.rend])
		s.rpos += n
	case len(p) >= readAhead:
		n, err = s.Conn.Read(p)
	default:
		var m int
		m, err = s.Conn.Read(s.rbuf)
		s.rpos, s.rend = 0, m
		n = copy(p, s.rbuf[:m])
		s.rpos = n
	}
	s.left -= n
	if s.left == 0 && s.greeted && !s.shaken.Load() {
		s.shaken.Store(true)
	}
	return n, err
}

// SetReadDeadline and SetWriteDeadline cap go-zookeeper's deadlines at
// the handshake's until its ConnectResponse is read whole.
func (s *sock) SetReadDeadline(t time.Time) error  { return s.Conn.SetReadDeadline(s.bound(t)) }
func (s *sock) SetWriteDeadline(t time.Time) error { return s.Conn.SetWriteDeadline(s.bound(t)) }

// bound is deadline t, or the handshake's if that comes first and the
// handshake is not done. go-zookeeper waits for the length of the
// ConnectResponse 10x its read timeout, which is 2/3 of the session
// timeout (27 s at 4 s sessions, 400 s at Curator's 60 s), and for its
// body with no deadline: a server that accepts connections but does not
// answer them yet (a server still starting) would hold a re-dial that
// long before the next host is tried (issue 38).
func (s *sock) bound(t time.Time) time.Time {
	if s.shakeBy.IsZero() || s.shaken.Load() {
		return t
	}
	if t.IsZero() || t.After(s.shakeBy) {
		return s.shakeBy
	}
	return t
}

// Write passes go-zookeeper's packets (one per Write: length, xid, opcode,
// body), holding back any request but pings, close and setAuth until the
// client's credentials have been written on this connection. The server
// handles a setAuth as soon as it reads it and closes the connection if it
// refuses it, so nothing written after is handled as anonymous. A read
// that is to set a watch gets its watch flag here (wirewatch.go).
func (s *sock) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if !s.sent {
		s.sent = true
		if len(p) >= 28 {
			s.sid = int64(binary.BigEndian.Uint64(p[20:28]))
			if s.sid != 0 {
				s.l.resumeZxid(p)
			}
		}
		if h := connectWriteHook.Load(); h != nil {
			(*h)(p)
		}
		s.connSent.Store(monoNow())
		return s.Conn.Write(p)
	}
	authed := false
	if len(p) >= 12 {
		switch op := int32(binary.BigEndian.Uint32(p[8:12])); op {
		case opSetAuth:
			s.auths++
			authed = s.auths == s.l.needAuth
		case opPing, opClose:
		default:
			if s.auths < s.l.needAuth {
				return 0, &net.OpError{Op: "write", Net: "tcp", Addr: s.RemoteAddr(), Err: errUnauthenticated}
			}
			if s.l.reads.n.Load() > 0 {
				s.l.flip(p)
			}
		}
	}
	var exp *expectation
	if s.l.nexpect.Load() > 0 {
		// Before the write, not after: go-zookeeper registers a request
		// before it writes it, so the reply, and the create's caller
		// asking done, may come before this Write returns (then the read
		// behind the create was skipped: a lock's parent read lost under
		// load, TestCreateReadsBehindAReplyFasterThanItsWrite). What
		// written queues is written by go-zookeeper's sending goroutine,
		// this one, once this packet is: behind the create either way.
		exp = s.l.writing(p)
	}
	s.stamp(p, exp)
	n, err := s.Conn.Write(p)
	if h := sockWriteHook.Load(); h != nil {
		(*h)(p)
	}
	if err == nil && authed && s.afterAuth != nil {
		err = s.writeAll(s.afterAuth)
		s.afterAuth = nil
	}
	return n, err
}

// sockWriteHook, if set (tests only), runs after each write of a request
// (not the handshake's), with the packet.
var sockWriteHook atomic.Pointer[func(p []byte)]

func (s *sock) Close() error {
	s.l.mu.Lock()
	delete(s.l.socks, s)
	if s.l.cur == s {
		s.l.cur = nil
	}
	s.l.mu.Unlock()
	s.failOwn()
	return s.Conn.Close()
}

// resumeZxid raises the lastZxidSeen of a ConnectRequest p that resumes a
// session (length, protocolVersion, lastZxidSeen, timeOut, sessionId, ...)
// to the latest zxid of any reply this client read. go-zookeeper sends
// the latest of the replies it read itself, which leaves out the
// framework's own requests (ownreq.go: a cache's multiReads, its
// addWatch); the server refuses a client whose lastZxidSeen is ahead of
// it, and only that keeps a client from resuming on a follower behind
// what the client already read (reads going back in time: a cache's
// re-read after the resumption undoing changes it had reported).
// Attacked by TestResumeCarriesOwnRepliesZxid.
func (l *link) resumeZxid(p []byte) {
	if z := l.lastZxid.Load(); z > int64(binary.BigEndian.Uint64(p[8:16])) {
		binary.BigEndian.PutUint64(p[8:16], uint64(z))
	}
}

// connectWriteHook, if set (tests only), sees each ConnectRequest as it
// is written.
var connectWriteHook atomic.Pointer[func(p []byte)]
