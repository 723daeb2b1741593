package zktest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// Op is a ZooKeeper request op code, as the Proxy sees it on the wire.
type Op int32

// Op codes of the ZooKeeper protocol (ZooDefs.OpCode).
const (
	OpCreate          Op = 1
	OpDelete          Op = 2
	OpExists          Op = 3
	OpGetData         Op = 4
	OpSetData         Op = 5
	OpGetACL          Op = 6
	OpSetACL          Op = 7
	OpGetChildren     Op = 8 // go-zookeeper's Children(W) send OpGetChildren2
	OpSync            Op = 9
	OpPing            Op = 11 // never counted nor held
	OpGetChildren2    Op = 12
	OpCheck           Op = 13
	OpMulti           Op = 14
	OpCreate2         Op = 15
	OpReconfig        Op = 16
	OpCheckWatches    Op = 17
	OpRemoveWatches   Op = 18
	OpCreateContainer Op = 19
	OpCreateTTL       Op = 21
	OpMultiRead       Op = 22
	OpAuth            Op = 100
	OpSetWatches      Op = 101
	OpAddWatch        Op = 106
	OpCloseSession    Op = -11
)

var opNames = map[Op]string{
	OpCreate: "create", OpDelete: "delete", OpExists: "exists", OpGetData: "getData",
	OpSetData: "setData", OpGetACL: "getACL", OpSetACL: "setACL", OpGetChildren: "getChildren",
	OpSync: "sync", OpPing: "ping", OpGetChildren2: "getChildren2", OpCheck: "check",
	OpMulti: "multi", OpCreate2: "create2", OpReconfig: "reconfig",
	OpCreateContainer: "createContainer", OpCheckWatches: "checkWatches",
	OpRemoveWatches: "removeWatches", OpCreateTTL: "createTTL", OpMultiRead: "multiRead",
	OpAddWatch: "addWatch", OpAuth: "auth",
	OpSetWatches: "setWatches", OpCloseSession: "closeSession",
}

func (o Op) String() string {
	if n, ok := opNames[o]; ok {
		return n
	}
	return fmt.Sprintf("op(%d)", int32(o))
}

// ErrReplyLost is returned by HeldReply.Wait when the connection that
// carried the held request closed before its reply reached the proxy.
var ErrReplyLost = errors.New("zktest: connection closed before the held reply arrived")

const (
	xidWatchEvent = -1
	xidPing       = -2
	maxFrame      = 64 << 20 // larger lengths mean the stream is not ZooKeeper framing
)

// frames splits one direction of a connection into ZooKeeper packets
// ([int32 big-endian length][payload]). A stream that is not framed that
// way (a four-letter word and its reply) turns it raw.
type frames struct {
	buf  []byte
	seen int // packets split so far; the first is the connect handshake
	raw  bool
}

// split appends b and returns the complete packets, each with its length
// prefix. If the stream is (or just turned) raw, it returns everything
// buffered as one chunk and raw true.
func (f *frames) split(b []byte) (pkts [][]byte, raw bool) {
	if f.raw {
		return [][]byte{b}, true
	}
	f.buf = append(f.buf, b...)
	rest := f.buf
	for len(rest) >= 4 {
		n := int64(int32(binary.BigEndian.Uint32(rest)))
		if n < 0 || n > maxFrame {
			f.raw = true
			all := f.buf
			f.buf = nil
			return [][]byte{all}, true
		}
		if int64(len(rest)) < 4+n {
			break
		}
		pkts = append(pkts, rest[:4+n])
		rest = rest[4+n:]
	}
	if len(pkts) > 0 {
		// pkts alias the old buffer, which is never written again
		f.buf = append([]byte(nil), rest...)
	}
	return pkts, false
}

// flush returns and forgets any partial packet.
func (f *frames) flush() []byte {
	b := f.buf
	f.buf = nil
	return b
}

// parseRequest returns the xid and op code of a request packet and
// whether it sets a watch (getData, exists, getChildren, getChildren2);
// ok is false if the packet is too short.
func parseRequest(pkt []byte) (xid int32, op Op, watch, ok bool) {
	p := pkt[4:]
	if len(p) < 8 {
		return 0, 0, false, false
	}
	xid = int32(binary.BigEndian.Uint32(p))
	op = Op(int32(binary.BigEndian.Uint32(p[4:])))
	switch op {
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		body := p[8:]
		if len(body) >= 4 {
			n := int64(int32(binary.BigEndian.Uint32(body)))
			if n >= 0 && int64(len(body)) > 4+n {
				watch = body[4+n] != 0
			}
		}
	}
	return xid, op, watch, true
}

// replyXid returns the xid of a reply packet; ok is false if too short.
func replyXid(pkt []byte) (int32, bool) {
	if len(pkt) < 8 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(pkt[4:])), true
}

// Requests returns how many requests with op code op clients sent through
// the proxy since it started or since ResetCounts, on every connection.
// Pings and connect handshakes are never counted.
func (p *Proxy) Requests(op Op) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqs[op]
}

// WatchRequests returns how many of the requests counted by Requests(op)
// asked to set a watch. Only exists, getData, getChildren and
// getChildren2 carry a watch flag; for other op codes it is 0.
func (p *Proxy) WatchRequests(op Op) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watchReqs[op]
}

// ResetCounts sets every Requests and WatchRequests count to 0.
func (p *Proxy) ResetCounts() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.reqs)
	clear(p.watchReqs)
}

// observeRequests counts the requests in a client-to-server chunk and
// lets armed holds claim them; called before the chunk is forwarded, so
// a claim is in place before the server can reply.
func (p *Proxy) observeRequests(pc *proxyConn, b []byte) {
	pkts, raw := pc.up.split(b)
	if raw {
		pc.raw.Store(true)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	closed := false // then loseHolds may have run: claim nothing
	select {
	case <-pc.done:
		closed = true
	default:
	}
	for _, pkt := range pkts {
		pc.up.seen++
		if pc.up.seen == 1 {
			continue // ConnectRequest
		}
		xid, op, watch, ok := parseRequest(pkt)
		if !ok {
			continue
		}
		if xid == xidPing || op == OpPing {
			p.pings++
			continue
		}
		p.reqs[op]++
		if watch {
			p.watchReqs[op]++
		}
		for i, h := range p.holds {
			if h.op == op && !closed {
				p.holds = append(p.holds[:i], p.holds[i+1:]...)
				h.pc, h.xid = pc, xid
				pc.held[xid] = h
				break
			}
		}
	}
}

// deliverReplies writes a server-to-client chunk to the client packet by
// packet, stopping at a held reply until it is released (so the replies
// behind it keep their order) or dropped. False if pc is done.
func (p *Proxy) deliverReplies(pc *proxyConn, b []byte) bool {
	if pc.raw.Load() && !pc.down.raw {
		// the client spoke no ZooKeeper: pass everything through
		pc.down.raw = true
		if rest := pc.down.flush(); len(rest) > 0 {
			b = append(rest, b...)
		}
	}
	pkts, raw := pc.down.split(b)
	if raw {
		return pc.write(pkts[0])
	}
	start := 0 // pkts[start:i] are to be written together
	for i, pkt := range pkts {
		pc.down.seen++
		if pc.down.seen == 1 {
			continue // ConnectResponse
		}
		xid, ok := replyXid(pkt)
		if !ok || xid == xidWatchEvent || xid == xidPing {
			continue
		}
		p.mu.Lock()
		h := pc.held[xid]
		delete(pc.held, xid)
		if h != nil {
			h.reply = true
			close(h.arrived)
		}
		p.mu.Unlock()
		if h == nil {
			continue
		}
		if !pc.writeAll(pkts[start:i]) {
			return false
		}
		start = i
		select {
		case <-h.decided:
		case <-pc.done:
			return false
		}
		if h.drop {
			pc.close()
			return false
		}
	}
	return pc.writeAll(pkts[start:])
}

func (pc *proxyConn) writeAll(pkts [][]byte) bool {
	if len(pkts) == 0 {
		return true
	}
	var b []byte
	for _, pkt := range pkts {
		b = append(b, pkt...)
	}
	return pc.write(b)
}

func (pc *proxyConn) write(b []byte) bool {
	if _, err := pc.client.Write(b); err != nil {
		pc.close()
		return false
	}
	return true
}

// loseHolds ends the holds claimed on pc whose reply never came; called
// once pc is closed.
func (p *Proxy) loseHolds(pc *proxyConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for xid, h := range pc.held {
		delete(pc.held, xid)
		close(h.arrived)
	}
}

// HeldReply is the reply to one request held back by the proxy; see
// Proxy.HoldReply. Its methods are safe for concurrent use.
type HeldReply struct {
	p  *Proxy
	op Op

	arrived chan struct{} // closed when the reply arrives or can no longer arrive
	decided chan struct{} // closed by Release or Drop

	// guarded by p.mu
	pc    *proxyConn
	xid   int32
	reply bool // the reply arrived (else the connection closed first)
	drop  bool
	done  bool // Release or Drop was called
}

// HoldReply arms a one-shot hold: the next request with op code op sent
// through the proxy, on any connection, is forwarded to the server as
// usual (so it takes effect), but its reply is held by the proxy, and so
// are the replies and watch events behind it on that connection, in
// order. Release delivers them; Drop closes that connection instead, so
// the client sees a connection loss for a request that took effect.
//
// While a reply is held, ping replies are held too: hold for less than
// the client's read timeout (go-zookeeper: 2/3 of the session timeout)
// unless a connection loss is what the test wants. Holds armed for the
// same op code claim requests in the order they were armed. Heal does
// not touch holds; Close ends them (a Wait on one no request claimed
// returns ErrReplyLost).
func (p *Proxy) HoldReply(op Op) *HeldReply {
	h := &HeldReply{p: p, op: op,
		arrived: make(chan struct{}), decided: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds = append(p.holds, h)
	return h
}

// Wait waits until the held reply has reached the proxy: the server has
// processed the request and the client has not seen the outcome. It
// returns ErrReplyLost if the connection closed first, or ctx's error.
func (h *HeldReply) Wait(ctx context.Context) error {
	select {
	case <-h.arrived:
	case <-ctx.Done():
		return fmt.Errorf("zktest: waiting for the held %v reply: %w", h.op, ctx.Err())
	}
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	if !h.reply {
		return fmt.Errorf("zktest: held %v reply: %w", h.op, ErrReplyLost)
	}
	return nil
}

// Release delivers the held reply and the ones queued behind it, and
// lets the connection flow again. Called before a request claimed the
// hold, it disarms it (Wait returns ErrReplyLost). Only the first Release
// or Drop has an effect.
func (h *HeldReply) Release() { h.decide(false) }

// Drop closes the client connection of the held request without
// delivering its reply (the client sees a connection loss; its session
// lives on). Called before the reply arrived, the connection is closed
// when it does; called before a request claimed the hold, it disarms it
// (Wait returns ErrReplyLost). Only the first Release or Drop has an
// effect.
func (h *HeldReply) Drop() { h.decide(true) }

func (h *HeldReply) decide(drop bool) {
	p := h.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.done {
		return
	}
	h.done, h.drop = true, drop
	for i, a := range p.holds {
		if a == h {
			p.holds = append(p.holds[:i], p.holds[i+1:]...)
			close(h.arrived) // disarmed: no reply will come, Wait says so
			break
		}
	}
	close(h.decided)
}

// endHoldsLocked ends the holds no request has claimed (Close): their Wait
// returns ErrReplyLost; p.mu held.
func (p *Proxy) endHoldsLocked() {
	for _, h := range p.holds {
		close(h.arrived)
	}
	p.holds = nil
}
