package framework

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// recConn is a net.Conn that records what is written and reads from in.
type recConn struct {
	net.Conn
	in      []byte
	written [][]byte
}

func (r *recConn) Read(p []byte) (int, error) {
	n := copy(p, r.in)
	r.in = r.in[n:]
	return n, nil
}

func (r *recConn) Write(p []byte) (int, error) {
	r.written = append(r.written, append([]byte(nil), p...))
	return len(p), nil
}

func (r *recConn) RemoteAddr() net.Addr { return &net.TCPAddr{} }
func (r *recConn) Close() error         { return nil }

// frame is a request packet as go-zookeeper writes it.
func frame(xid, op int32) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b[0:], 12)
	binary.BigEndian.PutUint32(b[4:], uint32(xid))
	binary.BigEndian.PutUint32(b[8:], uint32(op))
	return b
}

// Issue 13 item 7: on a client with credentials, no request but pings,
// close and setAuth leaves before the credentials on each connection; the
// negotiated timeout is read from the ConnectResponse.
func TestSockHoldsRequestsUntilAuthSent(t *testing.T) {
	resp := make([]byte, 40)
	binary.BigEndian.PutUint32(resp[0:], 36)
	binary.BigEndian.PutUint32(resp[8:], 4000) // timeOut
	rc := &recConn{in: resp}
	l := newLink(1, func(string, string, time.Duration) (net.Conn, error) { return rc, nil }, 2, &watchReads{}, nil)
	nc, err := l.dialer("tcp", "x:1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5) // go-zookeeper reads the length first, then the rest
	for range 3 {
		nc.Read(buf)
	}
	if got := l.timeout(); got != 4*time.Second {
		t.Fatalf("negotiated timeout %v, want 4s", got)
	}
	mustWrite := func(b []byte, ok bool) {
		t.Helper()
		_, err := nc.Write(b)
		if ok != (err == nil) {
			t.Fatalf("write op %d: %v, want ok=%v", int32(binary.BigEndian.Uint32(b[8:])), err, ok)
		}
		if err != nil && !errors.Is(err, errUnauthenticated) {
			t.Fatalf("write refused with %v", err)
		}
	}
	mustWrite(make([]byte, 48), true) // the ConnectRequest
	mustWrite(frame(-2, opPing), true)
	mustWrite(frame(1, 1), false) // a create before any credential
	mustWrite(frame(2, opSetAuth), true)
	mustWrite(frame(3, 4), false) // a getData with one of two credentials sent
	mustWrite(frame(4, opSetAuth), true)
	mustWrite(frame(5, 1), true)
	if len(rc.written) != 5 {
		t.Fatalf("%d packets reached the server, want 5 (connect, ping, 2 setAuth, create)", len(rc.written))
	}
	l.kill()
	if _, err := l.dialer("tcp", "x:1", time.Second); !errors.Is(err, errLinkClosed) {
		t.Fatalf("dial on a retired link: %v", err)
	}
}
