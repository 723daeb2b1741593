package framework

import (
	"context"
	"sync"

	"github.com/go-zookeeper/zk"
)

// childFlight is one getChildren read shared by every caller that joined it.
type childFlight struct {
	done     chan struct{}
	children *SharedChildren
	err      error
}

// SharedChildren is one getChildren answer shared by concurrent callers,
// with views of it (a sorted list, an index) computed once for all of them.
type SharedChildren struct {
	names []string
	mu    sync.Mutex
	views map[string]*sharedView
}

type sharedView struct {
	once sync.Once
	v    any
}

// Names returns the children's names. The slice is shared: do not modify it.
func (s *SharedChildren) Names() []string { return s.names }

// View returns make(Names()), computed once per key for everyone sharing
// this answer. The value is shared: do not modify it.
func (s *SharedChildren) View(key string, make func(names []string) any) any {
	s.mu.Lock()
	if s.views == nil {
		s.views = map[string]*sharedView{}
	}
	v := s.views[key]
	if v == nil {
		v = &sharedView{}
		s.views[key] = v
	}
	s.mu.Unlock()
	v.once.Do(func() { v.v = make(s.names) })
	return v.v
}

// childReads coalesces concurrent ChildrenShared calls per path: at most
// one read runs per path, and callers that arrive while it runs share the
// next one, sent after all of them arrived.
type childReads struct {
	mu      sync.Mutex
	running map[string]bool
	next    map[string]*childFlight
}

// ChildrenShared is Children for many concurrent callers of one path (a
// thousand waiters of one lock in one process): they share reads instead of
// each making its own, so the server answers once and the client holds one
// copy. A caller never joins a read sent before it called, so what it gets
// is at least as new as its call (it sees its own writes). The answer is
// shared: read it, do not modify it; derive from it with View, once for all.
func (c *Client) ChildrenShared(ctx context.Context, path string) (*SharedChildren, error) {
	full, err := c.checkPath("children", path)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		_, _, err := c.Children(ctx, path) // reports the nil context
		return nil, err
	}
	r := &c.childReads
	r.mu.Lock()
	if r.running == nil {
		r.running, r.next = map[string]bool{}, map[string]*childFlight{}
	}
	f := r.next[full]
	if f == nil {
		f = &childFlight{done: make(chan struct{})}
		r.next[full] = f
	}
	start := !r.running[full]
	if start {
		r.running[full] = true
		delete(r.next, full)
	}
	r.mu.Unlock()
	if start {
		c.mu.Lock()
		closed := c.closed
		if !closed {
			c.wg.Add(1)
		}
		c.mu.Unlock()
		if closed {
			// Fail f and every flight queued behind it (each read ends at
			// once with ErrClosed), so that no later caller waits for a
			// read that will never run.
			c.runChildReads(full, path, f)
		} else {
			go func() { defer c.wg.Done(); c.runChildReads(full, path, f) }()
		}
	}
	select {
	case <-f.done:
		return f.children, f.err
	case <-c.ctx.Done():
		return nil, &OpError{"children", path, ErrClosed}
	case <-ctx.Done():
		return nil, &OpError{"children", path, ctx.Err()}
	}
}

// runChildReads runs f, then every flight queued behind it, for one path.
func (c *Client) runChildReads(full, path string, f *childFlight) {
	r := &c.childReads
	for f != nil {
		names, err := call(c, c.ctx, "children", path, func(conn *zk.Conn) ([]string, error) {
			ch, _, err := conn.Children(full)
			return ch, err
		})
		f.children, f.err = &SharedChildren{names: names}, err
		close(f.done)
		r.mu.Lock()
		f = r.next[full]
		delete(r.next, full)
		if f == nil {
			delete(r.running, full)
		}
		r.mu.Unlock()
	}
}
