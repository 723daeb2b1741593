package framework

import (
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// parentRead is the read of a create's parent (WithParentStat) sent right
// behind the create on its connection: it is queued as the create is
// written, so both are usually out before either answer comes back, and
// ZooKeeper handles a session's requests in order, so the parent's stat is
// read after the create at the cost of no round trip. The reading
// goroutine starts only as the create is written, and lives one round
// trip.
type parentRead struct {
	c    *Client
	full string                  // the parent's server path
	conn atomic.Pointer[zk.Conn] // the first attempt's connection, set before its create is queued
	exp  *expectation            // the create's, for its reply's zxid
	done func() bool             // drops the expectation; true if the create was seen going out
	read chan struct{}           // closed once the reader ended
	list bool                    // WithParentChildren: the read lists the children
	stat *Stat
	kids []string // the children, if listed
}

// readParentBehind arms a reader of p's parent that sends its request as
// soon as p's create request goes out, behind it (link.expect).
func (c *Client) readParentBehind(p *createPlan) *parentRead {
	c.mu.Lock()
	l := c.link
	c.mu.Unlock()
	r := &parentRead{c: c, full: p.parentFull, read: make(chan struct{}), list: p.co.parentChildren}
	r.exp, r.done = l.expect(p.full, func() { go r.run() })
	return r
}

func (r *parentRead) run() {
	defer close(r.read)
	if h := parentReadHook.Load(); h != nil {
		(*h)()
	}
	conn := r.conn.Load()
	switch {
	case conn == nil:
	case r.list:
		if kids, st, err := conn.Children(r.full); err == nil {
			r.stat, r.kids = st, kids
		}
	default:
		if ok, st, err := conn.Exists(r.full); err == nil && ok {
			r.stat = st
		}
	}
}

// result returns the parent's stat if it was read behind a create that
// made the node with its first request (valid), else nil. It waits for the
// read only when its stat will be used: a create whose ctx ended while it
// was in flight returns without waiting for the server (the reader then
// ends by itself, its stat unread).
func (r *parentRead) result(valid bool) (*Stat, []string, int64) {
	if h := parentResultHook.Load(); h != nil {
		(*h)()
	}
	if !r.done() {
		return nil, nil, 0 // never written on the link armed (a reconnection): nothing read
	}
	if !valid {
		return nil, nil, 0
	}
	<-r.read
	return r.stat, r.kids, r.exp.zxid.Load() // the create's reply came before the read's, on that connection
}

// parentReadHook, if set (tests only), runs before a parent read behind a
// create is sent (the create written, perhaps not answered yet).
var parentReadHook atomic.Pointer[func()]

// parentResultHook, if set (tests only), runs when a create that read its
// parent behind it has its answer, before it takes the read's.
var parentResultHook atomic.Pointer[func()]
