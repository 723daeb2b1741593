package framework

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// Issue 38 item 5: the link knows when the last request the server
// answered was sent (the ConnectRequest, a ping, any request), from which
// the client counts the session timeout: a reply takes the sending of its
// own request, the earliest of its xid (pings all have xid -2), in
// whatever order the replies come (a setAuth is answered at once); a
// watch event answers nothing.
func TestLinkKnowsWhenTheLastRequestAnsweredWasSent(t *testing.T) {
	resp := make([]byte, 40)
	binary.BigEndian.PutUint32(resp[0:], 36)
	binary.BigEndian.PutUint32(resp[8:], 4000) // timeOut
	binary.BigEndian.PutUint64(resp[12:], 0x42)
	rc := &recConn{}
	l := newLink(1, func(string, string, time.Duration) (net.Conn, error) { return rc, nil }, 0, &watchReads{}, nil)
	nc, err := l.dialer("tcp", "x:1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := nc.(*sock)
	if _, ok := l.lastAnswered(); ok {
		t.Fatal("a request answered before any was sent")
	}
	type span struct{ from, to int64 }
	write := func(p []byte) span {
		t.Helper()
		from := monoNow()
		if _, err := nc.Write(p); err != nil {
			t.Fatal(err)
		}
		return span{from, monoNow()}
	}
	read := func(pkt []byte) {
		t.Helper()
		rc.in = pkt
		buf := make([]byte, 4) // go-zookeeper reads the length first, then the rest
		for len(rc.in) > 0 || s.left > 0 {
			if _, err := nc.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	sentIn := func(what string, sp span) {
		t.Helper()
		at := l.lastSent.Load()
		if at < sp.from || at > sp.to {
			t.Fatalf("%s: the last request answered was sent at %d, want the one sent in [%d, %d]", what, at, sp.from, sp.to)
		}
		if ago, ok := l.lastAnswered(); !ok || ago < 0 || ago > time.Duration(monoNow()-sp.from) {
			t.Fatalf("%s: lastAnswered %v %v", what, ago, ok)
		}
	}

	connect := write(make([]byte, 48))
	read(resp)
	sentIn("ConnectResponse", connect)

	ping1 := write(frame(-2, opPing))
	get := write(frame(7, opGetData))
	ping2 := write(frame(-2, opPing))
	auth := write(frame(-4, opSetAuth))
	read(reply(-2, 9, 0, 0))
	sentIn("first ping's reply", ping1)
	read(reply(7, 9, 0, 0))
	sentIn("getData's reply", get)
	read(watchEvent(2, "/a"))
	sentIn("a watch event", get)
	read(reply(-2, 9, 0, 0))
	sentIn("second ping's reply", ping2)
	read(reply(-4, 9, 0, 0))
	sentIn("setAuth's reply", auth)

	// Out of order: a setAuth answered before an earlier request; that
	// request's reply, sent earlier, moves nothing back.
	create := write(frame(8, opCreate))
	auth2 := write(frame(-4, opSetAuth))
	read(reply(-4, 9, 0, 0))
	sentIn("a setAuth answered first", auth2)
	read(reply(8, 9, 0, 0))
	sentIn("the earlier create's reply", auth2)
	_ = create
	read(reply(99, 9, 0, 0)) // answers nothing we sent
	sentIn("a reply of an unknown xid", auth2)

	s.smu.Lock()
	left := len(s.inflight) - s.head
	s.smu.Unlock()
	if left != 0 {
		t.Fatalf("%d requests still in flight, want none", left)
	}
}

// The in-flight record holds what is in flight, however many requests
// pass: a pipeline that never drains (always one request behind) does not
// grow it.
func TestSockInflightStaysSmall(t *testing.T) {
	rc := &recConn{}
	l := newLink(1, func(string, string, time.Duration) (net.Conn, error) { return rc, nil }, 0, &watchReads{}, nil)
	nc, err := l.dialer("tcp", "x:1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := nc.(*sock)
	for i := range int32(100000) {
		s.stamp(frame(i, opGetData), nil)
		if i%3 == 0 {
			s.stamp(frame(-2, opPing), nil)
			s.replied(-2, 0, 0)
		}
		if i > 0 {
			s.replied(i-1, 0, 0)
		}
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	if n := len(s.inflight) - s.head; n != 1 || cap(s.inflight) > 16 {
		t.Fatalf("%d in flight in a record of capacity %d, want 1 in a small one", n, cap(s.inflight))
	}
}
