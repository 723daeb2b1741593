package framework

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// gateRig is a link's socket on one end of a pipe, a fake server on the
// other, and a reader on the socket that reads as go-zookeeper does.
type gateRig struct {
	l      *link
	nc     net.Conn
	srv    net.Conn
	got    chan int32 // xids delivered to the reader; connectXid for the ConnectResponse
	traces chan string
	ended  chan error // the reader's error, once it stopped
}

const connectXid = 1 << 30

func newGateRig(t *testing.T, watching bool) *gateRig {
	t.Helper()
	cli, srv := net.Pipe()
	r := &gateRig{srv: srv, got: make(chan int32, 16), traces: make(chan string, 16), ended: make(chan error, 1)}
	r.l = newLink(1, func(string, string, time.Duration) (net.Conn, error) { return cli, nil }, 0)
	r.l.watching = func() bool { return watching }
	r.l.traceGate = func(what string, xid int32) { r.traces <- fmt.Sprint(what, " ", xid) }
	nc, err := r.l.dialer("tcp", "x:1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r.nc = nc
	t.Cleanup(func() { r.l.kill(); srv.Close() })
	go io.Copy(io.Discard, srv) // the server reads what the client writes
	go func() {                 // go-zookeeper's reading: a length, then the packet
		buf := make([]byte, 64)
		for first := true; ; first = false {
			if _, err := io.ReadFull(nc, buf[:4]); err != nil {
				r.ended <- err
				return
			}
			n := int(binary.BigEndian.Uint32(buf[:4]))
			if _, err := io.ReadFull(nc, buf[:n]); err != nil {
				r.ended <- err
				return
			}
			if first {
				r.got <- connectXid
			} else {
				r.got <- int32(binary.BigEndian.Uint32(buf[:4]))
			}
		}
	}()
	return r
}

// greet writes the ConnectRequest (with session id sid) and has the server
// answer it, then send packets of the given xids.
func (r *gateRig) greet(t *testing.T, sid int64, timeoutMs int32, xids ...int32) {
	t.Helper()
	req := make([]byte, 48)
	binary.BigEndian.PutUint32(req[0:], 44)
	binary.BigEndian.PutUint64(req[20:], uint64(sid))
	if _, err := r.nc.Write(req); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 40)
	binary.BigEndian.PutUint32(out[0:], 36)
	binary.BigEndian.PutUint32(out[8:], uint32(timeoutMs))
	binary.BigEndian.PutUint64(out[12:], 9)
	for _, x := range xids {
		p := make([]byte, 20) // length, xid, zxid, err
		binary.BigEndian.PutUint32(p[0:], 16)
		binary.BigEndian.PutUint32(p[4:], uint32(x))
		binary.BigEndian.PutUint64(p[8:], 100)
		out = append(out, p...)
	}
	go r.srv.Write(out)
}

func (r *gateRig) expect(t *testing.T, xids ...int32) {
	t.Helper()
	for _, want := range xids {
		select {
		case x := <-r.got:
			if x != want {
				t.Fatalf("delivered xid %d, want %d", x, want)
			}
		case err := <-r.ended:
			t.Fatalf("reader ended (%v) waiting for xid %d", err, want)
		case <-time.After(10 * time.Second):
			t.Fatalf("xid %d not delivered", want)
		}
	}
}

func (r *gateRig) expectTrace(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-r.traces:
		if got != want {
			t.Fatalf("gate: %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("gate: no %q", want)
	}
}

func (r *gateRig) noneDelivered(t *testing.T) {
	t.Helper()
	select {
	case x := <-r.got:
		t.Fatalf("xid %d delivered through the closed gate", x)
	default:
	}
}

// go-zookeeper/zk#35: on a connection that resumes the session while
// watches are kept, the first reply waits until go-zookeeper has written
// its SetWatches (built from the c.lastZxid that replies write); events,
// pings and setAuth replies pass before it.
func TestGateHoldsRepliesUntilSetWatches(t *testing.T) {
	r := newGateRig(t, true)
	r.greet(t, 7, 30000, -2, -1, -4, 5, 6)
	r.expect(t, connectXid, -2)
	r.expectTrace(t, "pass -2") // traced before delivery, so in order
	r.expect(t, -1, -4)
	r.expectTrace(t, "pass -1")
	r.expectTrace(t, "pass -4")
	r.expectTrace(t, "hold 5") // the reader now waits at the gate
	r.noneDelivered(t)
	if _, err := r.nc.Write(frame(8, 4)); err != nil { // a getData: not the gate's key
		t.Fatal(err)
	}
	r.noneDelivered(t) // the select in admit still waits: nothing but the gate moved
	if _, err := r.nc.Write(frame(9, opSetWatches)); err != nil {
		t.Fatal(err)
	}
	r.expect(t, 5, 6)
	if len(r.traces) != 0 {
		t.Fatalf("gate traced %q after it opened", <-r.traces)
	}
}

// A connection of a new session (no session id in its ConnectRequest: the
// first, or the one after an expiry) has no SetWatches coming: go-zookeeper
// dropped its watches. Nothing waits there, nor where no watch is armed.
func TestGateOpenWithoutSessionOrWatches(t *testing.T) {
	for _, c := range []struct {
		name     string
		watching bool
		sid      int64
	}{{"new session", true, 0}, {"no watch", false, 7}} {
		t.Run(c.name, func(t *testing.T) {
			r := newGateRig(t, c.watching)
			r.greet(t, c.sid, 30000, 5, -1, 6)
			r.expect(t, connectXid, 5, -1, 6)
			if len(r.traces) != 0 {
				t.Fatalf("gate traced %q", <-r.traces)
			}
		})
	}
}

// A wait at the gate ends when the socket is closed (the link retired), and
// after the backstop if no SetWatches comes: never a hang.
func TestGateWaitEnds(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		r := newGateRig(t, true)
		r.greet(t, 7, 30000, 5)
		r.expect(t, connectXid)
		r.expectTrace(t, "hold 5")
		r.l.kill()
		select {
		case err := <-r.ended:
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("reader ended with %v, want the closed socket's error", err)
			}
		case x := <-r.got:
			t.Fatalf("xid %d delivered on a closed socket", x)
		case <-time.After(10 * time.Second):
			t.Fatal("reader still waits at the gate of a closed socket")
		}
	})
	t.Run("backstop", func(t *testing.T) {
		r := newGateRig(t, true) // backstop: 100 ms
		r.greet(t, 7, 300, 5, 6)
		r.expect(t, connectXid)
		r.expectTrace(t, "hold 5")
		r.expect(t, 5, 6)
	})
}
