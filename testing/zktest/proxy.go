package zktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy on loopback between ZooKeeper clients and a server,
// for fault injection: partitions (Blackhole), connection loss (Drop),
// refused connections (Refuse), latency (SetDelay) and lost responses
// (DropAfterRequest, HoldReply). Point the client at Addr instead of the
// server. It also counts the requests clients send, per op code
// (Requests, WatchRequests).
// curator-test has no equivalent (Curator's tests stop servers or use
// Java-side hooks). All methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener
	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every state change
	conns     map[*proxyConn]struct{}
	blackhole bool
	refuse    bool
	delay     time.Duration
	dropAfter int // client->server writes left before the armed drop; 0: not armed
	closed    bool
	drops     int          // Drop calls so far: a connection accepted before one is dropped too
	reqs      map[Op]int   // requests seen, per op code
	watchReqs map[Op]int   // of which set a watch
	holds     []*HeldReply // armed, not yet claimed by a request
	pings     int          // pings seen, for the tests
}

// proxyConn is one proxied connection.
type proxyConn struct {
	client, server net.Conn
	done           chan struct{}
	once           sync.Once

	up, down frames      // used by the pump of that direction only
	raw      atomic.Bool // the client does not speak ZooKeeper framing

	// guarded by Proxy.mu
	dropState int                  // dropNone, dropWriting, dropArmed
	draining  bool                 // the client side is gone; the server side is being drained
	held      map[int32]*HeldReply // claimed holds by request xid
}

const (
	dropNone    = iota
	dropWriting // the n-th request is being written to the server
	dropArmed   // it was written: drop before the next server bytes
)

func (pc *proxyConn) close() {
	pc.once.Do(func() {
		close(pc.done)
		pc.client.Close()
		pc.server.Close()
	})
}

// NewProxy listens on a free loopback port and forwards every accepted
// connection to target (host:port).
func NewProxy(target string) (*Proxy, error) {
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("zktest: NewProxy(%q): %w", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("zktest: NewProxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{target: target, ln: ln, ctx: ctx, cancel: cancel,
		changed: make(chan struct{}), conns: map[*proxyConn]struct{}{},
		reqs: map[Op]int{}, watchReqs: map[Op]int{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// StartProxy is NewProxy for tests: tb.Fatal on error, Close registered
// with tb.Cleanup.
func StartProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p, err := NewProxy(target)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// Addr returns the proxy's "127.0.0.1:PORT", the address to give clients.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Blackhole stops forwarding bytes in both directions, on current and new
// connections, while keeping every socket open: a network partition. The
// client hears nothing (its session times out and it reconnects, into the
// black hole again); the server hears nothing and expires the session after
// its timeout. Bytes and connection closes that arrive meanwhile are held
// and delivered after Heal, as TCP would after a partition ends.
func (p *Proxy) Blackhole() { p.setBlackhole(true) }

func (p *Proxy) setBlackhole(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blackhole = on
	p.notifyLocked()
}

// Drop closes every current connection now (the client sees a connection
// loss; its session lives on). New connections are still accepted.
func (p *Proxy) Drop() {
	p.mu.Lock()
	p.drops++ // and those still dialling the server (handle)
	conns := make([]*proxyConn, 0, len(p.conns))
	for pc := range p.conns {
		conns = append(conns, pc)
	}
	p.mu.Unlock()
	for _, pc := range conns {
		pc.close()
	}
}

// Refuse makes the proxy refuse new connections (accept and close them at
// once) while on; current connections are not touched.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
	p.notifyLocked()
}

// SetDelay adds latency d before forwarding each chunk of bytes, in both
// directions (0 removes it).
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = max(d, 0)
	p.notifyLocked()
}

// DropAfterRequest arms a one-shot fault: once the next n client-to-server
// writes (chunks, which for ZooKeeper clients is usually one request each,
// pings included) have been forwarded to the server, the connection that
// carried the n-th one is dropped before any server-to-client bytes that
// follow it are delivered. The request is processed by the server but the
// client never sees the response: a create that succeeded although the
// client got a connection loss. The server side is half-closed after the
// request and drained, so the server reads the whole request. n <= 0
// disarms.
func (p *Proxy) DropAfterRequest(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropAfter = max(n, 0)
	p.notifyLocked()
}

// Heal undoes Blackhole, Refuse and SetDelay, and disarms a pending
// DropAfterRequest. Bytes held by the black hole are delivered.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blackhole, p.refuse, p.delay, p.dropAfter = false, false, 0, 0
	p.notifyLocked()
}

// Conns returns the number of connections currently proxied.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close closes the listener and every connection and waits for the
// proxy's goroutines to end. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	already := p.closed
	p.closed = true
	conns := make([]*proxyConn, 0, len(p.conns))
	for pc := range p.conns {
		conns = append(conns, pc)
	}
	if !already {
		p.notifyLocked()
	}
	p.endHoldsLocked()
	p.mu.Unlock()
	p.cancel()
	var err error
	if !already {
		err = p.ln.Close()
	}
	for _, pc := range conns {
		pc.close()
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			// e.g. out of file descriptors: back off briefly
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		p.mu.Lock()
		if p.closed || p.refuse {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.wg.Add(1)
		drops := p.drops
		p.mu.Unlock()
		go p.handle(c, drops)
	}
}

// handle proxies the accepted client; drops is Proxy.drops when it was
// accepted: a Drop while the server is dialled closes it too, and so does
// a Refuse meanwhile (it is not a current connection yet).
func (p *Proxy) handle(client net.Conn, drops int) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: 3 * time.Second}
	server, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	if testHookDialed != nil {
		testHookDialed(p)
	}
	pc := &proxyConn{client: client, server: server, done: make(chan struct{}),
		held: map[int32]*HeldReply{}}
	p.mu.Lock()
	if p.closed || p.refuse || p.drops != drops {
		p.mu.Unlock()
		pc.close()
		return
	}
	p.conns[pc] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		p.pump(pc, true)
	}()
	p.pump(pc, false)
	pc.close()
	p.loseHolds(pc)
	p.mu.Lock()
	delete(p.conns, pc)
	p.mu.Unlock()
}

// waitPass blocks while the proxy is black-holed; false if pc was closed.
func (p *Proxy) waitPass(pc *proxyConn) bool {
	for {
		p.mu.Lock()
		bh, ch := p.blackhole, p.changed
		p.mu.Unlock()
		if !bh {
			select {
			case <-pc.done:
				return false
			default:
				return true
			}
		}
		select {
		case <-ch:
		case <-pc.done:
			return false
		}
	}
}

// sleepDelay waits for the configured delay, as it is now: a delay
// shortened or removed (Heal) meanwhile ends sooner; false if pc was
// closed.
func (p *Proxy) sleepDelay(pc *proxyConn) bool {
	start := time.Now()
	for {
		p.mu.Lock()
		d, ch := p.delay, p.changed
		p.mu.Unlock()
		left := d - time.Since(start)
		if left <= 0 {
			return true
		}
		if testHookDelaying != nil {
			testHookDelaying(p)
		}
		t := time.NewTimer(left)
		select {
		case <-t.C:
			return true
		case <-ch:
			t.Stop()
		case <-pc.done:
			t.Stop()
			return false
		}
	}
}

// pump copies one direction of pc: client to server if up, else server to
// client.
func (p *Proxy) pump(pc *proxyConn, up bool) {
	src, dst := pc.server, pc.client
	if up {
		src, dst = pc.client, pc.server
	}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			// Past the delay, the black hole again: one set meanwhile
			// holds these bytes too.
			if !p.waitPass(pc) || !p.sleepDelay(pc) || !p.waitPass(pc) {
				return
			}
			if up {
				p.observeRequests(pc, buf[:n])
				if !p.forwardRequest(pc, buf[:n]) {
					pc.close()
					return
				}
			} else {
				drop, ok := p.mustDrop(pc)
				if !ok {
					return
				}
				if drop {
					p.dropForRequest(pc)
					return
				}
				if !p.deliverReplies(pc, buf[:n]) {
					return
				}
			}
		}
		if rerr != nil {
			p.mu.Lock()
			draining := pc.draining
			p.mu.Unlock()
			if up && draining {
				return // the server side is being drained by the other pump
			}
			// a partition would not deliver the close either
			p.waitPass(pc)
			if !up {
				_, _ = dst.Write(pc.down.flush()) // a partial packet, as TCP would
			}
			pc.close()
			return
		}
	}
}

// forwardRequest writes b to the server, counting it for DropAfterRequest.
func (p *Proxy) forwardRequest(pc *proxyConn, b []byte) bool {
	p.mu.Lock()
	counted := false
	if p.dropAfter > 0 {
		p.dropAfter--
		if p.dropAfter == 0 {
			pc.dropState = dropWriting
			counted = true
			p.notifyLocked()
		}
	}
	p.mu.Unlock()
	_, err := pc.server.Write(b)
	if counted {
		p.mu.Lock()
		pc.dropState = dropArmed
		p.notifyLocked()
		p.mu.Unlock()
	}
	return err == nil
}

// mustDrop reports whether server bytes about to be delivered on pc must
// be dropped instead (DropAfterRequest); it waits while the armed request
// is still being written. ok is false if pc was closed.
func (p *Proxy) mustDrop(pc *proxyConn) (drop, ok bool) {
	for {
		p.mu.Lock()
		st, ch := pc.dropState, p.changed
		p.mu.Unlock()
		switch st {
		case dropArmed:
			return true, true
		case dropNone:
			return false, true
		}
		select {
		case <-ch:
		case <-pc.done:
			return false, false
		}
	}
}

// dropForRequest closes the client side of pc at once and the server side
// gracefully: half-close, then read until the server closes, so that the
// server reads the whole request instead of getting a reset.
func (p *Proxy) dropForRequest(pc *proxyConn) {
	p.mu.Lock()
	pc.draining = true
	p.mu.Unlock()
	pc.client.Close()
	if tc, ok := pc.server.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_ = pc.server.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		if _, err := pc.server.Read(buf); err != nil {
			break
		}
	}
	pc.close()
}

// Test hooks, set only by the package's tests, before the proxy starts:
// testHookDialed runs once a connection's server is dialled, before it is
// proxied; testHookDelaying each time a chunk starts (or resumes) its
// delay.
var testHookDialed, testHookDelaying func(p *Proxy)
