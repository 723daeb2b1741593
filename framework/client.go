package framework

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
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
	bg      *background

	rootReady  atomic.Bool
	childReads childReads

	mu            sync.Mutex
	closed        bool
	conn          *zk.Conn
	connEvents    <-chan zk.Event
	gen           int
	connected     bool
	connectedCh   chan struct{} // closed while connected
	everConnected bool
	state         State
	session       *Session
	expireTimer   *time.Timer
	authed        map[int]bool
	listeners     map[*listener]struct{}
}

// event is what the client's single event goroutine processes, in order.
type event struct {
	gen    int
	zk     zk.Event
	sid    int64 // session id, for StateHasSession
	expire bool  // the simulated-expiration timer fired for session sid
}

// New creates a client for connectString ("host:port,host:port[/chroot]")
// and starts connecting in the background (Curator's newClient + start).
// It fails only on invalid arguments. Use BlockUntilConnected to wait for
// the first connection; operations wait for it by themselves.
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
		connectedCh: make(chan struct{}),
		authed:      map[int]bool{},
		listeners:   map[*listener]struct{}{},
	}
	c.bg = newBackground(c)
	c.mu.Lock()
	err = c.dialLocked()
	c.mu.Unlock()
	if err != nil {
		cancel()
		return nil, err
	}
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.loop() }()
	go func() { defer c.wg.Done(); c.bg.run() }()
	return c, nil
}

type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug(fmt.Sprintf(format, args...), "source", "go-zookeeper")
}

// dialLocked opens a new go-zookeeper connection (a new generation); events
// of older generations are ignored from then on.
func (c *Client) dialLocked() error {
	c.gen++
	gen := c.gen
	var (
		ready = make(chan struct{})
		conn  *zk.Conn
	)
	cb := func(ev zk.Event) {
		e := event{gen: gen, zk: ev}
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			<-ready
			e.sid = conn.SessionID()
		}
		c.events.push(e)
	}
	dialer := c.opts.dialer
	conn, evs, err := zk.Connect(c.servers, c.opts.sessionTimeout,
		zk.WithDialer(zk.Dialer(dialer)),
		zk.WithEventCallback(cb),
		zk.WithLogger(zkLogger{c.opts.logger}),
		zk.WithLogInfo(false),
		c.opts.sendBuffer())
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	close(ready)
	c.conn, c.connEvents = conn, evs
	return nil
}

// closeConn closes a go-zookeeper connection and waits until its goroutines
// are gone (its event channel is closed last).
func closeConn(conn *zk.Conn, evs <-chan zk.Event) {
	conn.Close()
	for range evs {
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
	c.mu.Lock()
	if c.closed || e.gen != c.gen {
		c.mu.Unlock()
		return
	}
	switch {
	case e.expire:
		c.onExpireTimerLocked(e.sid)
	case e.zk.Type == zk.EventSession:
		switch e.zk.State {
		case zk.StateHasSession:
			if !c.authed[e.gen] && len(c.opts.auths) > 0 {
				conn := c.conn
				c.mu.Unlock()
				ok := c.authenticate(conn)
				c.mu.Lock()
				if c.closed || e.gen != c.gen {
					break
				}
				if !ok { // the connection dropped meanwhile; try on the next one
					break
				}
				c.authed[e.gen] = true
			}
			c.onSessionLocked(e.sid)
		case zk.StateDisconnected:
			c.onDisconnectedLocked()
		case zk.StateExpired:
			c.loseSessionLocked(ErrSessionLost)
		}
	case e.zk.Type == zk.EventNotWatching:
		c.watches.invalidate(e.zk.Path, ErrSessionLost)
	default:
		c.watches.fire(e.zk.Type, e.zk.Path)
	}
	c.mu.Unlock()
}

func (c *Client) authenticate(conn *zk.Conn) bool {
	for _, a := range c.opts.auths {
		if err := conn.AddAuth(a.scheme, a.auth); err != nil {
			c.opts.logger.Warn("adding auth failed", "scheme", a.scheme, "err", err)
			return false
		}
	}
	return true
}

func (c *Client) onSessionLocked(sid int64) {
	if c.session != nil && c.session.id != sid {
		c.loseSessionLocked(ErrSessionLost)
	}
	if c.session == nil {
		c.session = newSession(sid)
	} else {
		c.session.resume()
	}
	if c.expireTimer != nil {
		c.expireTimer.Stop()
		c.expireTimer = nil
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
	if c.session == nil {
		return
	}
	c.session.suspend()
	c.post(StateSuspended)
	gen, sid := c.gen, c.session.id
	d := c.opts.sessionTimeout * time.Duration(c.opts.expirePercent) / 100
	c.expireTimer = time.AfterFunc(d, func() {
		c.events.push(event{gen: gen, sid: sid, expire: true})
	})
}

// loseSessionLocked ends the current session: LOST is posted, the session's
// Done channel closed, and every watch of ours told.
func (c *Client) loseSessionLocked(cause error) {
	if c.session == nil {
		return
	}
	c.session.lose()
	c.session = nil
	c.post(StateLost)
	c.watches.invalidateAll(cause)
}

// onExpireTimerLocked declares the session lost after the session timeout
// spent disconnected (Curator's simulated expiration): a partitioned client
// cannot hear the server expire it. The old handle is dropped and a new one
// (new session) opened, so that we never again act in the old session.
func (c *Client) onExpireTimerLocked(sid int64) {
	c.expireTimer = nil
	if c.connected || c.session == nil || c.session.id != sid {
		return
	}
	c.opts.logger.Info("session declared lost after the session timeout spent disconnected", "session", fmt.Sprintf("0x%x", sid))
	c.loseSessionLocked(ErrSessionLost)
	old, oldEvents := c.conn, c.connEvents
	if err := c.dialLocked(); err != nil {
		c.opts.logger.Error("reconnecting after session loss failed", "err", err)
		return
	}
	c.wg.Add(1)
	go func() { defer c.wg.Done(); closeConn(old, oldEvents) }()
}

// BlockUntilConnected waits until the client is connected, ctx is done, or
// the client is closed (ErrClosed).
func (c *Client) BlockUntilConnected(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	ch := c.connectedCh
	c.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-c.ctx.Done():
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("framework: waiting for connection: %w", ctx.Err())
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

// Session returns the current session, or nil while there is none (before
// the first connection, and between a LOST and the next connection).
func (c *Client) Session() *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// SessionFor returns the Session with the given id if it is the current
// one; otherwise that session is gone and the returned Session is lost.
func (c *Client) SessionFor(id int64) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != nil && c.session.id == id {
		return c.session
	}
	s := newSession(id)
	s.lose()
	return s
}

// DefaultData returns the data recipes put in their nodes when the caller
// gives none (WithDefaultData).
func (c *Client) DefaultData() []byte { return append([]byte(nil), c.opts.defaultData...) }

// SessionTimeout returns the session timeout the client asked for.
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

// Close closes the session and stops every goroutine the client started;
// it returns once they are gone. Pending background deletes are abandoned
// (the server removes ephemeral nodes with the session). Calls after Close
// fail with ErrClosed. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.connected = false
	if c.expireTimer != nil {
		c.expireTimer.Stop()
	}
	conn, evs := c.conn, c.connEvents
	if c.session != nil {
		c.session.lose()
		c.session = nil
	}
	for l := range c.listeners {
		close(l.stop)
		delete(c.listeners, l)
	}
	c.watches.invalidateAll(ErrClosed)
	c.mu.Unlock()
	c.cancel()
	closeConn(conn, evs)
	c.wg.Wait()
	return nil
}
