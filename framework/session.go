package framework

import (
	"sync"
	"time"
)

// Session is one ZooKeeper session of a Client. Ephemeral nodes (lock and
// lease nodes) live exactly as long as the session that made them, so a
// recipe holding such a node watches its Session: Done is closed when the
// session is lost (expired, declared lost after the session timeout spent
// disconnected, or ended by Close; Err says which), and Suspended when its
// connection is in doubt. A new session after expiry is a new Session value.
type Session struct {
	id   int64
	done chan struct{}

	mu      sync.Mutex
	susp    chan struct{} // closed while suspended; replaced on reconnection
	err     error         // why the session ended; nil while it lives
	timeout time.Duration // negotiated with the server
}

func newSession(id int64) *Session {
	return &Session{id: id, done: make(chan struct{}), susp: make(chan struct{})}
}

// ID returns ZooKeeper's session id.
func (s *Session) ID() int64 { return s.id }

// Done returns a channel that is closed when the session is lost.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns nil while the session lives, and once Done is closed why it
// ended: curator.ErrClosed if the client was closed, curator.ErrSessionLost if the session
// expired or was declared lost. Waits that end because Done was closed
// should return (a wrap of) this error.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Timeout returns the session timeout the server granted (negotiated
// within its minSessionTimeout and maxSessionTimeout, so possibly less than
// asked with WithSessionTimeout). The client declares the session LOST after
// this long spent disconnected (times WithSessionExpirationPercent), as
// Curator 5 does. It is 0 if the server's answer could not be read.
func (s *Session) Timeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timeout
}

// Suspended returns a channel that is closed when the session's connection
// is next lost (SUSPENDED), or already closed if it is suspended now or the
// session is lost. After a reconnection with the same session, a new call
// returns a new channel.
func (s *Session) Suspended() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.susp
}

// Lost reports whether the session is lost.
func (s *Session) Lost() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *Session) setTimeout(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timeout = d
}

func (s *Session) suspend() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.susp:
	default:
		close(s.susp)
	}
}

func (s *Session) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.susp:
		if s.err == nil {
			s.susp = make(chan struct{})
		}
	default:
	}
}

// lose ends the session with cause (curator.ErrSessionLost or curator.ErrClosed); only the
// first cause counts.
func (s *Session) lose(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = cause
	select {
	case <-s.susp:
	default:
		close(s.susp)
	}
	close(s.done)
}
