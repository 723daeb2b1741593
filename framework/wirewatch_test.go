package framework

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// wireRig is a link whose connections are pipes to a fake server: the
// test writes what go-zookeeper would write, sees what reaches the server,
// and has the server answer; a reader reads as go-zookeeper does.
type wireRig struct {
	l     *link
	reads *watchReads
	nc    net.Conn
	srv   net.Conn
	sent  chan []byte // packets that reached the server
	got   chan int32  // xids delivered to the reader (connectXid: the ConnectResponse)
}

const connectXid = 1 << 30

func newWireRig(t *testing.T, needAuth int) *wireRig {
	r := &wireRig{reads: &watchReads{}}
	r.l = newLink(1, nil, needAuth, r.reads, nil) // dial sets its Dialer
	t.Cleanup(r.l.kill)
	r.dial(t)
	return r
}

// dial opens a new connection of the link, as go-zookeeper does after a
// disconnection.
func (r *wireRig) dial(t *testing.T) {
	t.Helper()
	cli, srv := net.Pipe()
	r.l.dial = func(string, string, time.Duration) (net.Conn, error) { return cli, nil }
	nc, err := r.l.dialer("tcp", "x:1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	r.nc, r.srv = nc, srv
	r.sent, r.got = make(chan []byte, 16), make(chan int32, 16)
	sent, got := r.sent, r.got
	go func() { // the server reads whole packets
		for {
			var h [4]byte
			if _, err := io.ReadFull(srv, h[:]); err != nil {
				return
			}
			p := make([]byte, 4+binary.BigEndian.Uint32(h[:]))
			copy(p, h[:])
			if _, err := io.ReadFull(srv, p[4:]); err != nil {
				return
			}
			sent <- p
		}
	}()
	go func() { // go-zookeeper's reading: a length, then the packet
		buf := make([]byte, 256)
		for first := true; ; first = false {
			if _, err := io.ReadFull(nc, buf[:4]); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint32(buf[:4]))
			if _, err := io.ReadFull(nc, buf[:n]); err != nil {
				return
			}
			if first {
				got <- connectXid
			} else {
				got <- int32(binary.BigEndian.Uint32(buf[:4]))
			}
		}
	}()
}

// connect writes a ConnectRequest for session sid and has the server
// grant session granted.
func (r *wireRig) connect(t *testing.T, sid, granted int64) {
	t.Helper()
	req := make([]byte, 48)
	binary.BigEndian.PutUint32(req[0:], 44)
	binary.BigEndian.PutUint64(req[20:], uint64(sid))
	r.write(t, req)
	r.next(t) // the ConnectRequest reached the server
	resp := make([]byte, 40)
	binary.BigEndian.PutUint32(resp[0:], 36)
	binary.BigEndian.PutUint32(resp[8:], 30000)
	binary.BigEndian.PutUint64(resp[12:], uint64(granted))
	r.serve(t, resp)
	r.delivered(t, connectXid)
}

func (r *wireRig) write(t *testing.T, p []byte) {
	t.Helper()
	if _, err := r.nc.Write(p); err != nil {
		t.Fatal(err)
	}
}

func (r *wireRig) serve(t *testing.T, p []byte) {
	t.Helper()
	go r.srv.Write(p)
}

// next returns the next packet that reached the server.
func (r *wireRig) next(t *testing.T) []byte {
	t.Helper()
	select {
	case p := <-r.sent:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("nothing reached the server")
		return nil
	}
}

func (r *wireRig) nothingSent(t *testing.T) {
	t.Helper()
	select {
	case p := <-r.sent:
		t.Fatalf("packet of op %d reached the server", int32(binary.BigEndian.Uint32(p[8:])))
	default:
	}
}

func (r *wireRig) delivered(t *testing.T, want int32) {
	t.Helper()
	select {
	case x := <-r.got:
		if x != want {
			t.Fatalf("delivered xid %d, want %d", x, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("xid %d not delivered", want)
	}
}

// readReq is a read request as go-zookeeper writes it: length, xid, op
// code, path, watch flag (always false: it is never asked for a watch).
func readReq(xid, op int32, path string) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	b = append(b, path...)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// reply is a server reply header (and a body of n zero bytes).
func reply(xid int32, zxid int64, code int32, n int) []byte {
	b := make([]byte, 20+n)
	binary.BigEndian.PutUint32(b[0:], uint32(16+n))
	binary.BigEndian.PutUint32(b[4:], uint32(xid))
	binary.BigEndian.PutUint64(b[8:], uint64(zxid))
	binary.BigEndian.PutUint32(b[16:], uint32(code))
	return b
}

// watchEvent is a watch notification (xid -1) of type typ on path.
func watchEvent(typ int32, path string) []byte {
	b := reply(-1, -1, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	b = binary.BigEndian.AppendUint32(b, 3) // SyncConnected
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	b = append(b, path...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// setWatches decodes a SetWatches packet: xid, relative zxid, and its
// data, exist and child paths.
func setWatches(t *testing.T, p []byte) (int32, int64, [3][]string) {
	t.Helper()
	if op := int32(binary.BigEndian.Uint32(p[8:])); op != opSetWatches {
		t.Fatalf("op %d reached the server, want SetWatches", op)
	}
	var lists [3][]string
	b := p[20:]
	for i := range lists {
		n := int(binary.BigEndian.Uint32(b))
		b = b[4:]
		for range n {
			k := int(binary.BigEndian.Uint32(b))
			lists[i] = append(lists[i], string(b[4:4+k]))
			b = b[4+k:]
		}
		slices.Sort(lists[i])
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes after SetWatches' lists", len(b))
	}
	return int32(binary.BigEndian.Uint32(p[4:])), int64(binary.BigEndian.Uint64(p[12:])), lists
}

// go-zookeeper/zk#35 is gone with go-zookeeper's watches: a watched read
// leaves go-zookeeper as a plain read and gets its watch flag on the wire;
// the link keeps the watches the server confirmed, spends those an event
// fires, and on a connection that resumes the session sets the rest again
// itself, right behind the handshake, relative to the latest reply, its
// reply kept from go-zookeeper. A new or expired session sets none.
func TestLinkKeepsTheSessionsWatches(t *testing.T) {
	r := newWireRig(t, 0)
	r.connect(t, 0, 9)

	endA := r.reads.begin(watchKey{"/a", watchData})
	endC := r.reads.begin(watchKey{"/c", watchExist})
	endD := r.reads.begin(watchKey{"/d", watchChild})
	endE := r.reads.begin(watchKey{"/e", watchData})
	r.write(t, readReq(1, opGetData, "/a"))
	r.write(t, readReq(2, opGetData, "/b")) // a plain read
	r.write(t, readReq(3, opExists, "/c"))
	r.write(t, readReq(4, opGetChildren2, "/d"))
	r.write(t, readReq(5, opGetData, "/e"))
	r.write(t, readReq(6, opGetChildren2, "/a")) // not the kind under way
	for i, want := range []byte{1, 0, 1, 1, 1, 0} {
		if p := r.next(t); p[len(p)-1] != want {
			t.Fatalf("request %d reached the server with watch flag %d, want %d", i+1, p[len(p)-1], want)
		}
	}
	r.reads.end(endA)
	r.reads.end(endC)
	r.reads.end(endD)
	r.reads.end(endE)
	r.write(t, readReq(7, opGetData, "/a")) // no watched read under way now
	if p := r.next(t); p[len(p)-1] != 0 {
		t.Fatal("a read after the watched one ended set a watch")
	}
	r.serve(t, slices.Concat(
		reply(1, 50, 0, 8),         // /a: a data watch
		reply(2, 51, 0, 8),         // /b: none
		reply(3, 52, errNoNode, 0), // /c missing: an exist watch
		reply(4, 53, 0, 8),         // /d: a child watch
		reply(5, 54, errNoNode, 0), // getData of a missing /e sets none
		watchEvent(3, "/x"),        // a change of a node we do not watch
		reply(6, 55, 0, 0),         // /a's children: a plain read
		reply(7, 60, 0, 0),         // the latest reply
		watchEvent(4, "/d"),        // fires /d's child watch
		reply(-2, 0, 0, 0),         // a ping
	))
	for _, x := range []int32{1, 2, 3, 4, 5, -1, 6, 7, -1, -2} {
		r.delivered(t, x)
	}

	// A new connection resumes the session: /a and /c are set again.
	r.dial(t)
	r.connect(t, 9, 9)
	xid, zxid, lists := setWatches(t, r.next(t))
	if xid != setWatchesXid || zxid != 60 || !slices.Equal(lists[0], []string{"/a"}) || !slices.Equal(lists[1], []string{"/c"}) || len(lists[2]) != 0 {
		t.Fatalf("SetWatches xid %d, relative zxid %d, lists %q; want -8, 60, [[/a] [/c] []]", xid, zxid, lists)
	}
	r.serve(t, slices.Concat(reply(setWatchesXid, 61, 0, 0), reply(8, 62, 0, 0)))
	r.delivered(t, 8) // SetWatches' reply is not go-zookeeper's

	// Creating /c fires its exist watch (and would fire a data watch).
	r.serve(t, watchEvent(1, "/c"))
	r.delivered(t, -1)
	r.dial(t)
	r.connect(t, 9, 9)
	_, zxid, lists = setWatches(t, r.next(t))
	if zxid != 62 || !slices.Equal(lists[0], []string{"/a"}) || len(lists[1])+len(lists[2]) != 0 {
		t.Fatalf("SetWatches relative zxid %d, lists %q; want 62, [[/a] [] []]", zxid, lists)
	}

	// The session expired: nothing to set again, now or on the new session.
	r.dial(t)
	r.connect(t, 9, 0)
	r.dial(t)
	r.connect(t, 0, 10)
	r.write(t, readReq(9, opGetData, "/a"))
	if p := r.next(t); int32(binary.BigEndian.Uint32(p[8:])) != opGetData {
		t.Fatalf("op %d reached the server first on a new session, want the getData", int32(binary.BigEndian.Uint32(p[8:])))
	}
	if len(r.l.held) != 0 || r.l.lastZxid.Load() != 0 {
		t.Fatalf("a new session inherited watches %v, zxid %d", r.l.held, r.l.lastZxid.Load())
	}
}

// On a client with credentials, the watches are set again behind them:
// never a request as anonymous.
func TestLinkSetsWatchesAgainBehindTheCredentials(t *testing.T) {
	r := newWireRig(t, 1)
	r.connect(t, 0, 9)
	r.write(t, frame(-4, opSetAuth))
	r.next(t)
	rd := r.reads.begin(watchKey{"/a", watchData})
	r.write(t, readReq(1, opGetData, "/a"))
	r.reads.end(rd)
	r.next(t)
	r.serve(t, reply(1, 50, 0, 0))
	r.delivered(t, 1)

	r.dial(t)
	r.connect(t, 9, 9)
	r.nothingSent(t)
	r.write(t, frame(-4, opSetAuth))
	if op := int32(binary.BigEndian.Uint32(r.next(t)[8:])); op != opSetAuth {
		t.Fatalf("op %d reached the server first, want setAuth", op)
	}
	if _, _, lists := setWatches(t, r.next(t)); !slices.Equal(lists[0], []string{"/a"}) {
		t.Fatalf("SetWatches lists %q, want [[/a] [] []]", lists)
	}
}

// Many watches are set again in several packets, each under 128 KB, as
// Java's client and go-zookeeper's do.
func TestSetWatchesSplit(t *testing.T) {
	var lists [5][]string
	for i := range 3000 {
		lists[i%3] = append(lists[i%3], "/"+strings.Repeat("p", 100)+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)))
	}
	pkts := encodeSetWatches(7, lists, false)
	if len(pkts) < 3 {
		t.Fatalf("%d packets for about 310 KB of paths", len(pkts))
	}
	var all [3][]string
	for _, p := range pkts {
		if len(p) > setWatchesMax {
			t.Fatalf("a packet of %d bytes", len(p))
		}
		if int(binary.BigEndian.Uint32(p)) != len(p)-4 {
			t.Fatal("length prefix does not match")
		}
		_, zxid, l := setWatches(t, p)
		if zxid != 7 {
			t.Fatalf("relative zxid %d", zxid)
		}
		for i := range l {
			all[i] = append(all[i], l[i]...)
		}
	}
	for i := range all {
		slices.Sort(lists[i])
		slices.Sort(all[i])
		if !slices.Equal(all[i], lists[i]) {
			t.Fatalf("list %d: %d paths sent, want %d", i, len(all[i]), len(lists[i]))
		}
	}
}

// trickle is a connection that yields its input one byte per read.
type trickle struct {
	net.Conn
	in []byte
}

func (c *trickle) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	p[0] = c.in[0]
	c.in = c.in[1:]
	return 1, nil
}

func (c *trickle) Write(p []byte) (int, error) { return len(p), nil }
func (c *trickle) Close() error                { return nil }

// Packets split across reads (here one byte per read) are read whole by
// the link before go-zookeeper's turn: replies and events are seen, the
// SetWatches reply is dropped, and go-zookeeper reads every other byte.
func TestLinkReadsSplitPackets(t *testing.T) {
	resp := make([]byte, 40)
	binary.BigEndian.PutUint32(resp[0:], 36)
	binary.BigEndian.PutUint32(resp[8:], 30000)
	binary.BigEndian.PutUint64(resp[12:], 9)
	big := watchEvent(3, "/"+strings.Repeat("x", 5000)) // longer than the read-ahead buffer
	stream := slices.Concat(resp, reply(1, 50, 0, 3), reply(setWatchesXid, 51, 0, 0), big, reply(2, 52, 0, 6000), watchEvent(2, "/b"))
	tc := &trickle{in: stream}
	reads := &watchReads{}
	l := newLink(1, func(string, string, time.Duration) (net.Conn, error) { return tc, nil }, 0, reads, nil)
	nc, err := l.dialer("tcp", "x:1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(make([]byte, 48)); err != nil { // the ConnectRequest
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	if _, err := io.ReadFull(nc, buf[:40]); err != nil { // go-zookeeper's handshake
		t.Fatal(err)
	}
	got := slices.Clone(buf[:40])
	rd := reads.begin(watchKey{"/a", watchData})
	if _, err := nc.Write(readReq(1, opGetData, "/a")); err != nil {
		t.Fatal(err)
	}
	reads.end(rd)
	for {
		if _, err := io.ReadFull(nc, buf[:4]); err != nil {
			break
		}
		n := int(binary.BigEndian.Uint32(buf[:4]))
		if _, err := io.ReadFull(nc, buf[4:4+n]); err != nil {
			t.Fatalf("a packet cut short: %v", err)
		}
		got = append(got, buf[:4+n]...)
	}
	want := slices.Concat(resp, reply(1, 50, 0, 3), big, reply(2, 52, 0, 6000), watchEvent(2, "/b"))
	if !slices.Equal(got, want) {
		t.Fatalf("go-zookeeper read %d bytes, want %d: every packet but the SetWatches reply", len(got), len(want))
	}
	if _, ok := l.held[watchKey{"/a", watchData}]; !ok || len(l.held) != 1 || l.lastZxid.Load() != 52 || l.timeout() != 30*time.Second {
		t.Fatalf("watches %v, zxid %d, timeout %v; want /a's data watch, 52, 30s", l.held, l.lastZxid.Load(), l.timeout())
	}
}
