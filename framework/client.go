package framework

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// Client is the Go counterpart of Curator's CuratorFramework: one ZooKeeper
// connection (and one session at a time) with connection states, a retry
// loop around every operation, protected creates, guaranteed deletes,
// namespaces, chroot and ACLs. It is safe for concurrent use. Close it when
// done: Close stops every goroutine it started.
type Client struct {
	opts    options
	servers []string
	paths   pather

	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	events  *queue[event]
	watches *watchMux
	persist *persistReg // persistent watches (persistent.go)
	reads   watchReads  // watched reads under way: their links set the watch flag (wirewatch.go)
	bg      *background
	redial  chan struct{} // asks the dialer goroutine for a new connection

	rootReady atomic.Bool
	// epoch moves with every session event go-zookeeper delivers (on its
	// own goroutine, between the last packet of one connection and the
	// first of the next) and with every generation: an unchanged epoch
	// means one connection all along (Mark).
	epoch atomic.Uint64

	mu            sync.Mutex
	closed        bool
	conn          *zk.Conn // never nil; a retired one until its successor is installed
	connEvents    <-chan zk.Event
	link          *link
	gen           int          // events of other generations are ignored; only nextGenLocked changes it
	liveGen       atomic.Int64 // gen, for the event callback, which takes no lock
	connected     bool
	connectedCh   chan struct{} // closed while connected
	everConnected bool
	state         State
	session       *Session // the current or, once lost, the last one; nil before the first
	expireTimer   *time.Timer
	expireToken   int           // the token of the armed expiry timer; bumped when it is stopped
	authedGen     int           // the generation whose connection took our credentials
	authErr       error         // the server refused our credentials (wraps zk.ErrAuthFailed)
	authFailed    chan struct{} // closed while authErr is set
	listeners     map[*listener]struct{}
	lookupHost    func(ctx context.Context, host string) ([]string, error) // tests replace it
}

// nextGenLocked starts a new generation and returns it (c.mu held): gen
// and its lock-free copy liveGen move together.
func (c *Client) nextGenLocked() int {
	c.gen++
	c.epoch.Add(1) // before liveGen: an event dropped for its generation finds the epoch moved
	c.liveGen.Store(int64(c.gen))
	return c.gen
}

// event is what the client's single event goroutine processes, in order.
type event struct {
	gen     int
	zk      zk.Event
	sid     int64         // session id, for StateHasSession
	timeout time.Duration // negotiated session timeout, for StateHasSession
	expire  bool          // the simulated-expiration timer fired for session sid
	token   int           // that timer's token
	barrier chan struct{} // closed when handled: every event before it is (awaitEvents)
}

// afterFunc is time.AfterFunc; tests replace it to fire expiry timers when
// they choose.
var afterFunc = time.AfterFunc

// handleHook, if set (tests only), runs on the event goroutine before it
// handles each event of go-zookeeper's, with its state.
var handleHook atomic.Pointer[func(state zk.State)]

// New creates a client for connectString ("host:port,host:port[/chroot]")
// and starts connecting in the background (Curator's newClient + start).
// It fails on invalid arguments and when no host name of connectString
// resolves now. Use BlockUntilConnected to wait for the first connection;
// operations wait for it by themselves.
func New(connectString string, opts ...Option) (*Client, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.err != nil {
		return nil, o.err
	}
	servers, chroot, err := parseConnectString(connectString)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		opts:        o,
		servers:     servers,
		paths:       newPather(chroot, o.namespace),
		ctx:         ctx,
		cancel:      cancel,
		events:      newQueue[event](),
		watches:     newWatchMux(),
		redial:      make(chan struct{}, 1),
		connectedCh: make(chan struct{}),
		authFailed:  make(chan struct{}),
		listeners:   map[*listener]struct{}{},
		lookupHost:  net.DefaultResolver.LookupHost,
	}
	c.persist = newPersistReg(c.watches, c.paths)
	c.persist.log = c.opts.logger.Error
	c.bg = newBackground(c)
	c.initTelemetry() // metrics and traces (telemetry.go)
	for _, fn := range o.listeners {
		c.AddListener(fn)
	}
	if err := c.dial(); err != nil {
		c.mu.Lock()
		c.stopListenersLocked()
		c.mu.Unlock()
		cancel()
		return nil, fmt.Errorf("%w: %w", curator.ErrInvalidArgument, err)
	}
	c.wg.Add(3)
	go func() { defer c.wg.Done(); c.loop() }()
	go func() { defer c.wg.Done(); c.bg.run() }()
	go func() { defer c.wg.Done(); c.dialLoop() }()
	return c, nil
}

type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug(fmt.Sprintf(format, args...), "source", "go-zookeeper")
}

// dial opens a new go-zookeeper connection (a new generation) and installs
// it in place of the current one, which it then closes. Resolving host
// names may take seconds: it runs with no lock held, never on the event
// goroutine. Events of the new connection wait until it is installed;
// events of older generations are ignored from then on.
func (c *Client) dial() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return curator.ErrClosed
	}
	l := newLink(c.nextGenLocked(), c.opts.dialer, len(c.opts.auths), &c.reads, c.persist)
	l.handshake = c.opts.handshakeTimeout()
	lookup := c.lookupHost
	c.mu.Unlock()
	addrs, err := c.resolve(lookup)
	if err != nil {
		return err
	}
	var (
		ready = make(chan struct{})
		conn  *zk.Conn
	)
	cb := func(ev zk.Event) {
		<-ready
		if ev.Type > 0 {
			// A node event goes straight to its waiters, from go-zookeeper's
			// receive goroutine: no queue, no event goroutine, no client
			// lock on the way (they are in ZooKeeper's order still: one
			// goroutine delivers them). The demultiplexer's sends never
			// block.
			if int64(l.gen) == c.liveGen.Load() {
				c.watches.fire(ev.Type, ev.Path)
				c.persist.dispatch(ev.Type, ev.Path)
			}
			return
		}
		c.epoch.Add(1) // in go-zookeeper's order: before any packet of a next connection
		e := event{gen: l.gen, zk: ev}
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			e.sid, e.timeout = conn.SessionID(), l.timeout()
		}
		c.events.push(e)
	}
	conn, evs, err := zk.Connect(addrs, c.opts.sessionTimeout,
		zk.WithDialer(l.dialer),
		zk.WithEventCallback(cb),
		zk.WithLogger(zkLogger{c.opts.logger}),
		zk.WithLogInfo(false),
		c.opts.sendBuffer())
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed || c.gen != l.gen {
		closed := c.closed
		c.mu.Unlock()
		close(ready)
		closeConn(conn, evs, l)
		if closed {
			return curator.ErrClosed
		}
		return errors.New("framework: connection superseded while dialing")
	}
	old, oldEvs, oldLink := c.conn, c.connEvents, c.link
	c.conn, c.connEvents, c.link = conn, evs, l
	c.mu.Unlock()
	close(ready)
	if old != nil && !oldLink.isDead() {
		c.wg.Add(1)
		go func() { defer c.wg.Done(); closeConn(old, oldEvs, oldLink) }()
	}
	return nil
}

// lookupTimeout bounds the name resolution of one dial (go-zookeeper's).
const lookupTimeout = 3 * time.Second

// resolve looks up the host names of the connect string, as zk.Connect
// would, but cancelled by Close, and keeping the hosts that resolve: one
// host that does not (its pod is down) must not keep the client from the
// others. It fails when none resolves. zk.Connect then gets addresses only
// and resolves nothing itself (go-zookeeper dials addresses anyway).
func (c *Client) resolve(lookup func(context.Context, string) ([]string, error)) ([]string, error) {
	ctx, cancel := context.WithTimeout(c.ctx, lookupTimeout)
	defer cancel()
	var addrs []string
	var errs []error
	for _, s := range c.servers {
		host, port, err := net.SplitHostPort(s)
		if err == nil {
			var ips []string
			if ips, err = lookup(ctx, host); err == nil {
				for _, ip := range ips {
					addrs = append(addrs, net.JoinHostPort(ip, port))
				}
				continue
			}
		}
		errs = append(errs, err)
	}
	if len(addrs) == 0 {
		if c.isClosed() {
			return nil, curator.ErrClosed
		}
		return nil, fmt.Errorf("framework: no host of the connect string resolves: %w", errors.Join(errs...))
	}
	if len(errs) > 0 {
		c.opts.logger.Warn("some hosts of the connect string do not resolve; connecting to the others", "err", errors.Join(errs...))
	}
	return addrs, nil
}

// dialLoop makes a new connection whenever asked (after a session loss),
// retrying with backoff until it succeeds or the client is closed: a host
// name that does not resolve for a while (a Kubernetes pod being replaced)
// must not leave the client without a connection for good.
func (c *Client) dialLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.redial:
		}
		for n := 0; ; n++ {
			err := c.dial()
			if err == nil {
				break
			}
			if errors.Is(err, curator.ErrClosed) {
				return
			}
			d := min(100*time.Millisecond<<min(n, 6), 5*time.Second)
			c.opts.logger.Warn("reconnecting after session loss failed; retrying", "servers", c.servers, "retry_in", d, "err", err)
			t := time.NewTimer(d)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

func (c *Client) loop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.events.signal:
			for _, e := range c.events.drain() {
				c.handle(e)
			}
		}
	}
}

func (c *Client) handle(e event) {
	if e.barrier != nil {
		close(e.barrier)
		return
	}
	if h := handleHook.Load(); h != nil {
		(*h)(e.zk.State)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || e.gen != c.gen {
		return
	}
	switch {
	case e.expire:
		c.onExpireTimerLocked(e.sid, e.token)
	case e.zk.Type == zk.EventSession:
		switch e.zk.State {
		case zk.StateHasSession:
			if len(c.opts.auths) > 0 && c.authedGen != e.gen && !c.authenticateLocked(e.gen) {
				return
			}
			c.onSessionLocked(e.sid, e.timeout)
		case zk.StateDisconnected:
			c.onDisconnectedLocked()
		case zk.StateExpired:
			c.noteServerExpiry() // telemetry.go
			c.loseSessionLocked(curator.ErrSessionLost)
		}
	}
}

// authenticateLocked sends the client's credentials on the connection of
// generation gen, unlocking c.mu meanwhile. It reports whether the
// connection may be used. A refusal by the server (zk.ErrAuthFailed; the
// server also closes the connection) is recorded: calls and
// BlockUntilConnected fail with it and listeners hear StateAuthFailed,
// until a later connection is accepted. go-zookeeper sends the accepted
// credentials again by itself on each reconnection of the same *zk.Conn.
func (c *Client) authenticateLocked(gen int) bool {
	conn := c.conn
	c.mu.Unlock()
	var err error
	for _, a := range c.opts.auths {
		if err = conn.AddAuth(a.scheme, a.auth); err != nil {
			if errors.Is(err, zk.ErrAuthFailed) {
				err = fmt.Errorf("framework: the server refused the credentials of scheme %q: %w", a.scheme, err)
			}
			break
		}
	}
	c.mu.Lock()
	if c.closed || gen != c.gen {
		return false
	}
	switch {
	case err == nil:
		c.authedGen = gen
		if c.authErr != nil {
			c.authErr = nil
			c.authFailed = make(chan struct{})
		}
		return true
	case errors.Is(err, zk.ErrAuthFailed):
		if c.authErr == nil {
			c.opts.logger.Error("authentication refused; the client stays unconnected (retrying on each reconnection)", "err", err)
			c.authErr = err
			close(c.authFailed)
		}
		c.post(StateAuthFailed)
	default: // the connection dropped meanwhile; try again on the next one
		c.opts.logger.Debug("adding auth failed; retrying on the next connection", "err", err)
	}
	return false
}

func (c *Client) onSessionLocked(sid int64, timeout time.Duration) {
	c.stopExpireTimerLocked()
	if c.session != nil && c.session.id != sid {
		c.noteServerExpiry() // telemetry.go
		c.loseSessionLocked(curator.ErrSessionLost)
	}
	if c.session == nil || c.session.Lost() {
		c.session = newSession(sid)
		if timeout > 0 && timeout < c.opts.sessionTimeout {
			c.opts.logger.Warn("the server granted a shorter session timeout than asked",
				"asked", c.opts.sessionTimeout, "granted", timeout, "session", fmt.Sprintf("0x%x", uint64(sid)))
		}
	} else {
		c.session.resume()
	}
	if timeout > 0 {
		c.session.setTimeout(timeout)
	}
	if !c.connected {
		c.connected = true
		close(c.connectedCh)
	}
	if !c.everConnected {
		c.everConnected = true
		c.post(StateConnected)
	} else {
		c.post(StateReconnected)
	}
}

func (c *Client) onDisconnectedLocked() {
	if !c.connected {
		return
	}
	c.connected = false
	c.connectedCh = make(chan struct{})
	if c.session == nil || c.session.Lost() {
		return
	}
	c.session.suspendNow()
	c.post(StateSuspended)
	c.stopExpireTimerLocked()
	gen, sid, token := c.gen, c.session.id, c.expireToken
	c.expireTimer = afterFunc(c.expireWaitLocked(), func() {
		c.events.push(event{gen: gen, sid: sid, expire: true, token: token})
	})
}

// expireWaitLocked is how long from now, disconnected, the client waits
// before it declares the session lost: the negotiated session timeout
// (times WithSessionExpirationPercent), counted from the sending of the
// last request the server answered (link.lastAnswered; a ping when idle).
// The server counts it from the last request it received, which it
// received no earlier, so the session is declared lost no later than the
// server can expire it, and a holder under curator.LoseOnLost is told
// before another process can hold (issue 38). Curator counts from its
// noticing the disconnect, which comes up to two thirds of the timeout
// (go-zookeeper's read timeout) after the last reply: 6.7 s after the
// partition at 4 s sessions, while another process held at 4.0 s. Zero or
// less fires at once.
func (c *Client) expireWaitLocked() time.Duration {
	timeout := c.session.Timeout()
	if timeout <= 0 {
		timeout = c.opts.sessionTimeout
	}
	wait := timeout * time.Duration(c.opts.expirePercent) / 100
	if ago, ok := c.link.lastAnswered(); ok {
		wait -= ago
	}
	return wait
}

// stopExpireTimerLocked stops the expiry timer; one that has fired already
// has its event ignored (its token is no longer current).
func (c *Client) stopExpireTimerLocked() {
	if c.expireTimer != nil {
		c.expireTimer.Stop()
		c.expireTimer = nil
	}
	c.expireToken++
}

// loseSessionLocked ends the current session: LOST is posted, the session's
// Done channel closed, and every watch of ours told. The lost Session stays
// the client's Session until the next one.
func (c *Client) loseSessionLocked(cause error) {
	if c.session == nil || c.session.Lost() {
		return
	}
	c.session.lose(cause)
	c.stopExpireTimerLocked()
	c.post(StateLost)
	c.watches.invalidateAll(cause)
	c.persist.invalidateAll(cause)
}

// onExpireTimerLocked declares the session lost once, disconnected, the
// session timeout has passed since the sending of the last request the
// server answered (expireWaitLocked; Curator's simulated expiration, which
// counts from the disconnect): a partitioned client cannot hear the server
// expire it. The old connection is retired at once, so that we never again
// act in the old session, and the dialer goroutine opens a new one (new
// session). A timer stopped meanwhile (its token is not current: the client
// reconnected, maybe to be disconnected again) is ignored.
func (c *Client) onExpireTimerLocked(sid int64, token int) {
	if token != c.expireToken || c.connected || c.session == nil || c.session.id != sid || c.session.Lost() {
		return
	}
	c.expireTimer = nil
	c.opts.logger.Info("session declared lost: disconnected, and the session timeout passed since the last request answered was sent", "session", fmt.Sprintf("0x%x", uint64(sid)))
	c.noteSimulatedExpiry() // telemetry.go
	c.loseSessionLocked(curator.ErrSessionLost)
	c.nextGenLocked() // the old connection's events are ignored from now on
	old, oldEvs, oldLink := c.conn, c.connEvents, c.link
	c.wg.Add(1)
	go func() { defer c.wg.Done(); closeConn(old, oldEvs, oldLink) }()
	select {
	case c.redial <- struct{}{}:
	default:
	}
}

// BlockUntilConnected waits until the client is connected, ctx is done, or
// the client is closed (curator.ErrClosed). If the server refuses the client's
// credentials, it returns that error (wrapping zk.ErrAuthFailed).
func (c *Client) BlockUntilConnected(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)
	}
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return curator.ErrClosed
		}
		if c.authErr != nil && !c.connected {
			err := c.authErr
			c.mu.Unlock()
			return err
		}
		ch, failed := c.connectedCh, c.authFailed
		c.mu.Unlock()
		select {
		case <-ch:
			return nil
		case <-failed: // look again: the error, or accepted meanwhile
		case <-c.ctx.Done():
			return curator.ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("framework: waiting for connection: %w", ctx.Err())
		}
	}
}

// State returns the last connection state posted (0 before the first).
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Connected reports whether the client is connected now.
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connected
}

// Session returns the current session, or once it is lost the last one
// (Lost() true, Err() saying why) until the next session begins: it is nil
// only before the first connection.
func (c *Client) Session() *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// sessionFor returns the Session with the given id if it is the current
// (or last) one; otherwise that session is gone and the returned Session is
// lost. A reply can come on a new session's connection before the event
// goroutine has handled that session's event (go-zookeeper queues the event
// and sends at once): if id is the session go-zookeeper is in, sessionFor
// waits for the events queued so far, that one among them, and looks again.
func (c *Client) sessionFor(id int64) *Session {
	c.mu.Lock()
	s, conn := c.session, c.conn
	c.mu.Unlock()
	if s != nil && s.id == id {
		return s
	}
	return c.newerSession(id, conn)
}

// newerSession is sessionFor's slow path, apart so that the create's
// frames, on every waiter's stack, stay small.
//
//go:noinline
func (c *Client) newerSession(id int64, conn *zk.Conn) *Session {
	if id != 0 && conn.SessionID() == id && c.awaitEvents() {
		c.mu.Lock()
		s := c.session
		c.mu.Unlock()
		if s != nil && s.id == id {
			return s
		}
	}
	s := newSession(id)
	s.lose(curator.ErrSessionLost)
	return s
}

// awaitEvents waits until the event goroutine has handled every event
// queued before the call; false if the client closed first.
func (c *Client) awaitEvents() bool {
	done := make(chan struct{})
	c.events.push(event{barrier: done})
	select {
	case <-done:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// DefaultData returns the data recipes put in their nodes when the caller
// gives none (WithDefaultData).
func (c *Client) DefaultData() []byte { return append([]byte(nil), c.opts.defaultData...) }

// SessionTimeout returns the session timeout the client asked for; the
// server may grant less (Session().Timeout()).
func (c *Client) SessionTimeout() time.Duration { return c.opts.sessionTimeout }

// Logger returns the client's logger, for recipes built on it.
func (c *Client) Logger() *slog.Logger { return c.opts.logger }

// Done returns a channel closed when the client is closed.
func (c *Client) Done() <-chan struct{} { return c.ctx.Done() }

func (c *Client) isClosed() bool {
	select {
	case <-c.ctx.Done():
		return true
	default:
		return false
	}
}

// stopListenersLocked removes and stops every listener (c.mu held).
func (c *Client) stopListenersLocked() {
	for l := range c.listeners {
		close(l.stop)
		delete(c.listeners, l)
	}
}

// Close closes the session and stops every goroutine the client started;
// it returns once they are gone, within a small constant time (a few
// seconds at worst: with the server unreachable and requests piled up,
// go-zookeeper waits up to twice its connection timeout to queue its
// close), never the session timeout. The one exception: a
// connection-state listener running its callback is not waited for (so a
// listener may call Close); its goroutine ends when the callback returns.
// Pending background deletes are abandoned (the server removes ephemeral
// nodes with the session). The session ends with curator.ErrClosed
// (Session().Err()). Calls after Close fail with curator.ErrClosed. Close
// is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.connected = false
	c.stopExpireTimerLocked()
	conn, evs, l := c.conn, c.connEvents, c.link
	if c.session != nil {
		c.session.lose(curator.ErrClosed)
	}
	c.stopListenersLocked()
	c.watches.invalidateAll(curator.ErrClosed)
	c.persist.invalidateAll(curator.ErrClosed)
	c.mu.Unlock()
	c.cancel()
	closeConn(conn, evs, l)
	c.wg.Wait()
	return nil
}
