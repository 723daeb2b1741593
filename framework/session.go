package framework

import (
	"context"
	"sync"
	"time"
)

// Session is one ZooKeeper session of a Client. Ephemeral nodes (lock and
// lease nodes) live exactly as long as the session that made them, so a
// recipe holding such a node watches its Session: Done is closed when the
// session is lost (expired, declared lost by the client, or ended by Close;
// Err says which), and Suspended when its connection is in doubt. The
// client declares it lost when, disconnected, the session timeout has
// passed since it sent the last request the server answered: the server,
// which counts from the last request it received, cannot have expired it
// sooner, so a holder told on Done is told no later than another process
// can take what it holds (but for its own delivery of the news). A new
// session after expiry is a new Session value.
type Session struct {
	id     int64
	ctx    context.Context // cancelled when the session is lost, cause its Err
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	susp    context.Context // cancelled at the next suspension; replaced on reconnection
	suspend context.CancelFunc
	err     error         // why the session ended; nil while it lives
	timeout time.Duration // negotiated with the server
}

func newSession(id int64) *Session {
	s := &Session{id: id}
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	s.susp, s.suspend = context.WithCancel(context.Background())
	return s
}

// ID returns ZooKeeper's session id.
func (s *Session) ID() int64 { return s.id }

// Done returns a channel that is closed when the session is lost.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

// Context returns a context that is cancelled when the session is lost,
// with Err as its cause (etcd's Session.Ctx): work that must not outlive
// the session runs under it, and context.AfterFunc runs a function when
// the session ends without a goroutine waiting meanwhile.
func (s *Session) Context() context.Context { return s.ctx }

// Err returns nil while the session lives, and once Done is closed why it
// ended: curator.ErrClosed if the client was closed, curator.ErrSessionLost
// if the session expired or was declared lost. Waits that end because Done
// was closed should return (a wrap of) this error.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Timeout returns the session timeout the server granted (negotiated
// within its minSessionTimeout and maxSessionTimeout, so possibly less than
// asked with WithSessionTimeout). The client, disconnected, declares the
// session LOST this long (times WithSessionExpirationPercent) after it sent
// the last request the server answered; Curator 5 counts the same timeout
// from its noticing the disconnect, later. It is 0 if the server's answer
// could not be read.
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
	return s.susp.Done()
}

// AfterSuspend arranges for f to run, on a goroutine of its own, when the
// session's connection is next lost (SUSPENDED) or the session is lost: at
// once if it is suspended or lost now. stop cancels it, as
// context.AfterFunc's does: it returns false if f has started (or stop was
// called before). No goroutine waits meanwhile.
func (s *Session) AfterSuspend(f func()) (stop func() bool) {
	s.mu.Lock()
	susp := s.susp
	s.mu.Unlock()
	return context.AfterFunc(susp, f)
}

// Lost reports whether the session is lost.
func (s *Session) Lost() bool { return s.ctx.Err() != nil }

func (s *Session) setTimeout(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timeout = d
}

func (s *Session) suspendNow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.suspend()
}

func (s *Session) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.susp.Err() != nil && s.err == nil {
		s.susp, s.suspend = context.WithCancel(context.Background())
	}
}

// lose ends the session with cause (curator.ErrSessionLost or
// curator.ErrClosed); only the first cause counts.
func (s *Session) lose(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = cause
	s.suspend()
	s.cancel(cause)
}
