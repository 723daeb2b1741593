package framework

import "sync"

// Session is one ZooKeeper session of a Client. Ephemeral nodes (lock and
// lease nodes) live exactly as long as the session that made them, so a
// recipe holding such a node watches its Session: Done is closed when the
// session is lost (expired, declared lost after the session timeout spent
// disconnected, or ended by Close), and Suspended when its connection is in
// doubt. A new session after expiry is a new Session value.
type Session struct {
	id   int64
	done chan struct{}

	mu   sync.Mutex
	susp chan struct{} // closed while suspended; replaced on reconnection
	lost bool
}

func newSession(id int64) *Session {
	return &Session{id: id, done: make(chan struct{}), susp: make(chan struct{})}
}

// ID returns ZooKeeper's session id.
func (s *Session) ID() int64 { return s.id }

// Done returns a channel that is closed when the session is lost.
func (s *Session) Done() <-chan struct{} { return s.done }

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
		if !s.lost {
			s.susp = make(chan struct{})
		}
	default:
	}
}

func (s *Session) lose() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost {
		return
	}
	s.lost = true
	select {
	case <-s.susp:
	default:
		close(s.susp)
	}
	close(s.done)
}
