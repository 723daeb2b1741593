package framework

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// go-zookeeper is never asked for a watch. It keeps its watches in a
// registry that it re-sends on each connection (SetWatches), and builds
// that request from its c.lastZxid on its loop goroutine while the
// connection's receiving goroutine writes c.lastZxid on every reply, with no
// lock (go-zookeeper/zk#35, samuel/go-zookeeper#260, unfixed in v1.0.4): a
// data race whenever it holds a watch when a connection starts, or gains
// one (a watched read answered) before its loop goroutine gets there. The
// second case cannot be seen from outside, so no gate on its traffic can
// order the two: the race goes only if go-zookeeper holds no watch at all.
//
// So a watched read is sent as go-zookeeper's plain read, with the watch
// flag set on the wire by the link (watchReads says which), and the link
// keeps the session's watches as the server holds them: added when a
// watched read's reply passes, spent by the event that fires them, sent
// again on a connection that resumes the session (its own SetWatches, with
// Java's xid for it, its reply kept from go-zookeeper). Node events reach
// the client through go-zookeeper's event callback as before (it has no
// watcher for them to notify).

// watchReads records the watched reads under way: a read of that node and
// kind written on the wire meanwhile sets a watch. A plain read of the same
// node written meanwhile sets one too, which costs nothing: the server
// keeps one watch per node, kind and connection.
type watchReads struct {
	n  atomic.Int32 // reads under way, read without the lock on each written packet
	mu sync.Mutex
	m  [3]map[string]*readsOf // by kind, then server path
}

// readsOf is the watched reads under way of one node and kind; key is
// shared by everything the link records of them (no copy of the path per
// request).
type readsOf struct {
	key watchKey
	n   int
}

// begin registers a watched read of k until end.
func (r *watchReads) begin(k watchKey) *readsOf {
	r.mu.Lock()
	if r.m[k.kind] == nil {
		r.m[k.kind] = map[string]*readsOf{}
	}
	e := r.m[k.kind][k.path]
	if e == nil {
		e = &readsOf{key: k}
		r.m[k.kind][k.path] = e
	}
	e.n++
	r.n.Add(1)
	r.mu.Unlock()
	return e
}

func (r *watchReads) end(e *readsOf) {
	r.mu.Lock()
	if e.n--; e.n == 0 {
		delete(r.m[e.key.kind], e.key.path)
	}
	r.n.Add(-1)
	r.mu.Unlock()
}

// A watched read is a plain read of a node between beginWatchedRead and
// endWatchedRead: its link sets the watch flag on the wire, and the read's
// entry is armed if it succeeds (go-zookeeper is never asked for a watch).
// Two calls, not one taking the read as a func: a waiter's stack is at its
// deepest in this read (issue 16: a thousand waiters' stacks are most of
// their memory).
func (c *Client) beginWatchedRead(key watchKey) *readsOf { return c.reads.begin(key) }

func (c *Client) endWatchedRead(r *readsOf, e *watchEntry, err error) {
	c.reads.end(r)
	if err == nil {
		c.watches.armed(r.key, e)
	}
}

// lookup returns the key of a watched read under way of path (as written
// on the wire) and kind.
func (r *watchReads) lookup(kind watchKind, path []byte) (watchKey, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.m[kind][string(path)] // no copy: a map index by a converted []byte
	if e == nil {
		return watchKey{}, false
	}
	return e.key, true
}

// Op codes of the reads that can set a watch (ZooDefs.OpCode), and the
// xid Java's client gives SetWatches (ClientCnxn.SET_WATCHES_XID), which
// the server echoes in its reply.
const (
	opExists       = 3
	opGetData      = 4
	opGetChildren  = 8
	opGetChildren2 = 12
	setWatchesXid  = -8
	errNoNode      = -101
	// setWatchesMax bounds one SetWatches packet, as Java's and
	// go-zookeeper's clients do (the server's jute.maxbuffer is 1 MB by
	// default).
	setWatchesMax = 128 * 1024
)

func readKind(op int32) (watchKind, bool) {
	switch op {
	case opGetData:
		return watchData, true
	case opExists:
		return watchExist, true
	case opGetChildren, opGetChildren2:
		return watchChild, true
	}
	return 0, false
}

// flip sets the watch flag of a read request p (length, xid, op code, path,
// watch) if a watched read of its node and kind is under way, and records
// its xid. It runs on go-zookeeper's sending goroutine, before p is written.
func (l *link) flip(p []byte) {
	if len(p) < 17 {
		return
	}
	kind, ok := readKind(int32(binary.BigEndian.Uint32(p[8:12])))
	if !ok {
		return
	}
	n := int(int32(binary.BigEndian.Uint32(p[12:16])))
	if n < 0 || 16+n+1 != len(p) { // the watch flag is the last byte
		return
	}
	k, ok := l.reads.lookup(kind, p[16:16+n])
	if !ok {
		return
	}
	if l.persist.covers(k) {
		// ZOOKEEPER-4466: a persistent watch of ours is held (or being
		// added) on this node, and its events fire this read's entry; a
		// one-shot watch on the same node would take its place on the
		// server. See persistReg.
		return
	}
	p[len(p)-1] = 1
	l.mu.Lock()
	l.pending[int32(binary.BigEndian.Uint32(p[4:8]))] = k
	l.npending.Store(int32(len(l.pending)))
	l.mu.Unlock()
}

// answered notes the reply (xid, error code) of a request: if it was a
// watched read, the server now holds its watch. Kinds are the server's:
// an exists answered with the node's stat is a data watch, with NoNode an
// exist watch (what SetWatches takes them for).
func (l *link) answered(xid, code int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k, ok := l.pending[xid]
	if !ok {
		return
	}
	delete(l.pending, xid)
	l.npending.Store(int32(len(l.pending)))
	switch {
	case k.kind == watchExist && code == 0:
		k.kind = watchData
	case k.kind == watchExist && code == errNoNode:
	case code != 0:
		return
	}
	l.held[k] = struct{}{}
}

// fired spends the watches an event of type t on path fires on the server:
// its data table (data and exist watches) on a creation, a change or a
// deletion; its child table on a change of children or a deletion.
func (l *link) fired(t int32, p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return
	}
	path := string(p)
	const created, deleted, changed, children = 1, 2, 3, 4
	switch t {
	case created, changed:
		delete(l.held, watchKey{path, watchData})
		delete(l.held, watchKey{path, watchExist})
	case deleted:
		delete(l.held, watchKey{path, watchData})
		delete(l.held, watchKey{path, watchExist})
		delete(l.held, watchKey{path, watchChild})
	case children:
		delete(l.held, watchKey{path, watchChild})
	}
}

// started is told of each handshake of the link's connections: whether
// the session was resumed. Requests of the earlier connection are never
// answered now. A new session holds no watch; a resumed one gets its
// watches back through the packets returned (SetWatches requests, relative
// to the latest reply read: the server fires at once those whose node
// changed since; SetWatches2 when persistent watches are held, which the
// server just adds again). persistent says whether any was.
func (l *link) started(resumed bool) (pkts [][]byte, persistent bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.pending)
	l.npending.Store(0)
	if !resumed {
		clear(l.held)
		l.lastZxid.Store(0)
		return nil, false
	}
	var lists [5][]string // data, exist, child, persistent, persistent recursive: SetWatches2's order
	lists[3], lists[4] = l.persist.lists()
	if len(l.held) == 0 && len(lists[3])+len(lists[4]) == 0 {
		return nil, false
	}
	for k := range l.held {
		if l.persist.covers(k) {
			// A one-shot watch armed before the persistent one on its node
			// (which the server made persistent): not sent as one-shot,
			// whatever order the server adds the lists in; its waiters are
			// fired by persistReg.resumed.
			delete(l.held, k)
			continue
		}
		i := 0
		switch k.kind {
		case watchExist:
			i = 1
		case watchChild:
			i = 2
		}
		lists[i] = append(lists[i], k.path)
	}
	persistent = len(lists[3])+len(lists[4]) > 0
	return encodeSetWatches(l.lastZxid.Load(), lists, persistent), persistent
}

// encodeSetWatches returns SetWatches packets (length, xid, op code,
// relativeZxid, three string vectors) for the paths, each under
// setWatchesMax; SetWatches2 packets (five vectors: the persistent and
// persistent recursive watches last) if v2.
func encodeSetWatches(zxid int64, lists [5][]string, v2 bool) [][]byte {
	var (
		pkts [][]byte
		cur  [5][]string
		size int
	)
	nl, op := 3, uint32(opSetWatches)
	if v2 {
		nl, op = 5, opSetWatches2
	}
	fixed := 4 + 4 + 4 + 8 + nl*4
	xid := int32(setWatchesXid)
	flush := func() {
		b := make([]byte, 0, fixed+size)
		b = binary.BigEndian.AppendUint32(b, 0) // length, below
		b = binary.BigEndian.AppendUint32(b, uint32(xid))
		b = binary.BigEndian.AppendUint32(b, op)
		b = binary.BigEndian.AppendUint64(b, uint64(zxid))
		for _, l := range cur[:nl] {
			b = binary.BigEndian.AppendUint32(b, uint32(len(l)))
			for _, p := range l {
				b = appendString(b, p)
			}
		}
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
		pkts = append(pkts, b)
		cur, size = [5][]string{}, 0
	}
	for i, l := range lists[:nl] {
		for _, p := range l {
			if size > 0 && fixed+size+4+len(p) > setWatchesMax {
				flush()
			}
			cur[i] = append(cur[i], p)
			size += 4 + len(p)
		}
	}
	if size > 0 {
		flush()
	}
	return pkts
}
