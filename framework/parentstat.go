package framework

import (
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// parentRead is the read of a create's parent (WithParentStat) sent right
// behind the create on its connection: both go out before either answer
// comes back, and ZooKeeper handles a session's requests in order, so the
// parent's stat is read after the create at the cost of no round trip.
type parentRead struct {
	full    string                  // the parent's server path
	conn    atomic.Pointer[zk.Conn] // the first attempt's connection, set before its create is queued
	written <-chan struct{}         // the first create request is written
	done    func()                  // drops the expectation
	stop    chan struct{}           // the create ended before its request was seen written
	read    chan struct{}           // closed once the reader ended
	stat    *Stat
}

// readParentBehind arms a reader of p's parent that sends its request as
// soon as p's create request is written.
func (c *Client) readParentBehind(p *createPlan) *parentRead {
	c.mu.Lock()
	l := c.link
	c.mu.Unlock()
	r := &parentRead{full: p.parentFull, stop: make(chan struct{}), read: make(chan struct{})}
	r.written, r.done = l.expect(p.full)
	go r.run()
	return r
}

func (r *parentRead) run() {
	defer close(r.read)
	select {
	case <-r.written:
	case <-r.stop:
		return
	}
	conn := r.conn.Load()
	if conn == nil {
		return
	}
	ok, st, err := conn.Exists(r.full)
	if err == nil && ok {
		r.stat = st
	}
}

// result returns the parent's stat if it was read behind a create that
// made the node with its first request (valid), else nil.
func (r *parentRead) result(valid bool) *Stat {
	r.done()
	close(r.stop)
	<-r.read
	if !valid {
		return nil
	}
	return r.stat
}
