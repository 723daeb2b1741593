package framework

// State is a connection state with Curator's meaning (ConnectionState).
type State int

const (
	// StateConnected: the first successful connection of the client.
	StateConnected State = iota + 1
	// StateSuspended: the connection was lost; the session may still be alive.
	// Whatever depends on the session (a lock, a lease) is in doubt.
	StateSuspended
	// StateReconnected: connected again after SUSPENDED or LOST (after LOST,
	// with a new session).
	StateReconnected
	// StateLost: the session is gone: expired as the server said, or declared
	// lost by the client, disconnected, once the session timeout has passed
	// since it sent the last request the server answered (no later than the
	// server can expire it). Ephemeral nodes of that session are gone, or
	// about to be.
	StateLost
	// StateReadOnly: connected to a read-only server. go-zookeeper cannot ask
	// for read-only mode, so this client never reports it; it is here so that
	// code ported from Curator compiles and reads the same.
	StateReadOnly
	// StateAuthFailed: the server refused the client's credentials
	// (WithAuth) and closed the connection. The client is not connected:
	// calls and BlockUntilConnected fail with an error wrapping
	// zk.ErrAuthFailed, and nothing is sent as anonymous. It keeps trying on
	// each reconnection, and posts CONNECTED or RECONNECTED if the
	// credentials are accepted later. Curator has no such state (its
	// ZooKeeper handle dies with KeeperState.AuthFailed).
	StateAuthFailed
)

var stateNames = map[State]string{
	StateConnected:   "CONNECTED",
	StateSuspended:   "SUSPENDED",
	StateReconnected: "RECONNECTED",
	StateLost:        "LOST",
	StateReadOnly:    "READ_ONLY",
	StateAuthFailed:  "AUTH_FAILED",
}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return "UNKNOWN"
}

// IsConnected reports whether s is a connected state (Curator's isConnected).
func (s State) IsConnected() bool {
	return s == StateConnected || s == StateReconnected || s == StateReadOnly
}

// listener delivers states to one callback, in order, on its own goroutine,
// so a slow listener delays only itself.
type listener struct {
	q    *queue[State]
	fn   func(State)
	stop chan struct{}
}

func (l *listener) run() {
	for {
		select {
		case <-l.stop:
			return
		case <-l.q.signal:
			for _, s := range l.q.drain() {
				select {
				case <-l.stop:
					return
				default:
				}
				l.fn(s)
			}
		}
	}
}

// AddListener registers fn to receive every connection state change, in
// order, with none dropped. fn runs on a goroutine of its own, so a slow
// listener stalls neither the client nor other listeners. The returned func
// removes the listener; Close removes all (no LOST is posted on Close, as in
// Curator). fn may call Close (e.g. to close the client on LOST). A nil fn
// is ignored.
func (c *Client) AddListener(fn func(State)) (remove func()) {
	if fn == nil {
		return func() {}
	}
	l := &listener{q: newQueue[State](), fn: fn, stop: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return func() {}
	}
	c.listeners[l] = struct{}{}
	c.mu.Unlock()
	// Not in c.wg: Close does not wait for a listener (which may be the one
	// calling Close); a stopped listener's goroutine ends once its callback
	// in progress, if any, returns.
	go l.run()
	return func() {
		// Whoever takes l out of the set (this or Close) stops it.
		c.mu.Lock()
		_, ok := c.listeners[l]
		delete(c.listeners, l)
		c.mu.Unlock()
		if ok {
			close(l.stop)
		}
	}
}

// post records a new state and hands it to every listener; consecutive
// duplicates are not posted (Curator). Called with c.mu held.
func (c *Client) post(s State) {
	if s == c.state {
		return
	}
	c.state = s
	c.noteState(s) // telemetry.go
	c.opts.logger.Debug("connection state", "state", s)
	for l := range c.listeners {
		l.q.push(s)
	}
}
