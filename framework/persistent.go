package framework

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// PersistentWatch is a persistent watch set by AddWatch: Curator's
// PersistentWatcher, ZooKeeper's addWatch (3.6+, ZOOKEEPER-1416). Unlike a
// one-shot Watch it is not spent by an event: it delivers every event of
// its node (non-recursive: created, changed, deleted, children changed) or
// of its node and all its descendants (recursive: created, changed and
// deleted, never children changed; Event.Path names the node) until Stop,
// the session's loss or the client's Close.
//
// Delivery: the function given to AddWatch is called with each event, one
// at a time, in the server's order, on a goroutine that runs only while
// calls are due (never go-zookeeper's: its event loop never waits for a
// consumer). The rule for a slow consumer: events wait in a queue of at
// most maxPersistentQueue; past that the queue is dropped and replaced by
// one EventMissed (the consumer re-reads what it watches, which a
// cache does anyway after a reconnection), so a consumer that falls behind
// costs bounded memory.
//
// Missed events: ZooKeeper does not replay, on a resumed connection, what
// changed while the client was disconnected (ZOOKEEPER-4655; one-shot
// watches do, through SetWatches' relative zxid): the client sets the
// watch again (SetWatches2) and delivers EventMissed before any event of
// the new connection. A lost session ends the watch: EventNotWatching with
// curator.ErrSessionLost (curator.ErrClosed when the client closes); add it
// again in the new session.
type PersistentWatch struct {
	c         *Client
	reg       *persistReg
	full      string // server path
	path      string // as the caller named it
	recursive bool
	fn        func(Event)

	q     serial[Event] // calls fn
	ended bool          // guarded by q.mu: stopped, or ended by the session or the client: nothing more is queued
}

// maxPersistentQueue bounds the events waiting for a persistent watch's
// function (see PersistentWatch); a variable for tests.
var maxPersistentQueue = 1 << 16

// Path returns the watched path, as the caller named it.
func (w *PersistentWatch) Path() string { return w.path }

// persistReg is the client's persistent watches, by server path, shared
// with its links (flip, started).
//
// The ZOOKEEPER-4466 invariant. ZooKeeper 3.6-3.8 keeps one watch mode
// per (connection, path) in each of its two watch tables
// (WatcherModeManager): a one-shot watch set on a node where the session
// holds a persistent one makes it one-shot (the next event removes it: the
// persistent watch is gone, silently), and a removeWatches Any removes
// both. So while an entry for path P is here (from before its addWatch is
// written until its removeWatches is answered, or the session ends), no
// read of P is written with the watch flag for the kinds the persistent
// watch covers (data and exist; child too when not recursive; flip asks
// covers): the one-shot waiter's entry is armed without a server watch and
// fired by the persistent watch's events, which include every event its
// server watch would have had. A child watch beside a recursive one is
// set: recursive watches never deliver NodeChildrenChanged; 3.6-3.8 put a
// recursive watch in the child table too (DataTree.addWatch), where the
// child watch makes that copy one-shot, which loses nothing (the recursive
// watch's events come from the data table). A one-shot watch armed before
// the addWatch is made persistent by it and fires as usual. When the
// entry goes (Stop, a failed AddWatch) or a resumed connection cannot
// replay (resumed), every one-shot entry of P is fired at once (a spurious
// wakeup: waiters re-read), since the server then holds no one-shot watch
// of ours on P (removeWatches Any took the child watch too) or none that
// would replay. Relies on: the server handling a session's requests in
// order; flip running on go-zookeeper's one sending goroutine under the
// connection's write lock, as the own requests' writes do; modes being
// per connection (other sessions' watches do not interfere). Broken by: a
// read of P flagged by go-zookeeper itself (never: it is asked for no
// watch). Attacked by: TestPersistentAndOneShotOnOnePath (it fails with
// the flag set: the persistent watch misses the second change).
type persistReg struct {
	mux   *watchMux
	paths pather
	log   func(msg string, args ...any)

	n  atomic.Int32 // len(m), read without the lock by flip
	mu sync.Mutex
	m  map[string]*persistEntry

	lmu   sync.Mutex
	locks map[string]*pathLock // AddWatch and Stop of one path, one at a time
}

// persistEntry is one server persistent watch of the client (one mode per
// path: see persistReg) and its owners.
type persistEntry struct {
	recursive bool
	subs      []*PersistentWatch // none: an orphan whose removal failed (the server may hold it)
}

type pathLock struct {
	mu   sync.Mutex
	refs int
}

func newPersistReg(mux *watchMux, paths pather) *persistReg {
	return &persistReg{mux: mux, paths: paths, m: map[string]*persistEntry{}, locks: map[string]*pathLock{}}
}

func (r *persistReg) lock(path string) func() {
	r.lmu.Lock()
	l := r.locks[path]
	if l == nil {
		l = &pathLock{}
		r.locks[path] = l
	}
	l.refs++
	r.lmu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		r.lmu.Lock()
		if l.refs--; l.refs == 0 {
			delete(r.locks, path)
		}
		r.lmu.Unlock()
	}
}

// covers reports whether a one-shot watch k must not be set on the server
// (see persistReg).
func (r *persistReg) covers(k watchKey) bool {
	if r == nil || r.n.Load() == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.m[k.path]
	return e != nil && (k.kind != watchChild || !e.recursive)
}

// lists returns the persistent and persistent recursive paths held, for
// SetWatches2.
func (r *persistReg) lists() (persistent, recursive []string) {
	if r == nil || r.n.Load() == 0 {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, e := range r.m {
		if e.recursive {
			recursive = append(recursive, p)
		} else {
			persistent = append(persistent, p)
		}
	}
	return persistent, recursive
}

// resumed tells every persistent watch that events may have been missed,
// and fires the one-shot entries they cover (no replay for those either):
// on the reading goroutine, before any packet of the resumed connection.
func (r *persistReg) resumed() {
	if r == nil {
		return
	}
	r.mu.Lock()
	var subs []*PersistentWatch
	var paths []string
	for p, e := range r.m {
		subs = append(subs, e.subs...)
		paths = append(paths, p)
	}
	r.mu.Unlock()
	for _, p := range paths {
		r.mux.release(p)
	}
	for _, w := range subs {
		w.push(Event{Type: EventMissed, Path: w.path})
	}
}

// refused is told that the server refused a SetWatches (code): the
// persistent watches were not set again, so they end.
func (r *persistReg) refused(code int32) {
	if r == nil {
		return
	}
	err := fmt.Errorf("%w: the server refused to set the watches again on a resumed connection: %w", curator.ErrSessionLost, codeError(code))
	if r.log != nil {
		r.log("the server refused SetWatches on a resumed connection; persistent watches end", "code", code)
	}
	r.invalidateAll(err)
}

// invalidateAll ends every persistent watch (the session is lost, or the
// client closed): EventNotWatching with err.
func (r *persistReg) invalidateAll(err error) {
	r.mu.Lock()
	var subs []*PersistentWatch
	for p, e := range r.m {
		subs = append(subs, e.subs...)
		delete(r.m, p)
	}
	r.n.Store(0)
	r.mu.Unlock()
	for _, w := range subs {
		w.end(Event{Type: EventNotWatching, Path: w.path, Err: err})
	}
}

// dispatch queues a node event (server type t, server path) to the
// persistent watches it belongs to.
func (r *persistReg) dispatch(t zk.EventType, path string) {
	if r.n.Load() == 0 {
		return
	}
	var et EventType
	switch t {
	case zk.EventNodeCreated:
		et = EventNodeCreated
	case zk.EventNodeDeleted:
		et = EventNodeDeleted
	case zk.EventNodeDataChanged:
		et = EventNodeDataChanged
	case zk.EventNodeChildrenChanged:
		et = EventNodeChildrenChanged
	default:
		return
	}
	var subs []*PersistentWatch
	r.mu.Lock()
	if e := r.m[path]; e != nil && (!e.recursive || et != EventNodeChildrenChanged) {
		subs = append(subs, e.subs...)
	}
	if et != EventNodeChildrenChanged { // the recursive watches of its ancestors
		for p := path; p != "/" && p != ""; {
			p = ParentPath(p)
			if e := r.m[p]; e != nil && e.recursive {
				subs = append(subs, e.subs...)
			}
		}
	}
	r.mu.Unlock()
	if len(subs) == 0 {
		return
	}
	user := r.paths.user(path)
	for _, w := range subs {
		w.push(Event{Type: et, Path: user})
	}
}

// push queues ev for w's function (see PersistentWatch: bounded).
func (w *PersistentWatch) push(ev Event) { w.queueEvent(ev, false) }

// end queues ev, the watch's last event.
func (w *PersistentWatch) end(ev Event) { w.queueEvent(ev, true) }

func (w *PersistentWatch) queueEvent(ev Event, last bool) {
	w.q.add(func(q []Event) []Event {
		if w.ended {
			return q
		}
		w.ended = last
		if len(q) >= maxPersistentQueue {
			q = append(q[:0], Event{Type: EventMissed, Path: w.path})
		}
		return append(q, ev)
	})
}

// AddWatch sets a persistent watch on path (recursive: on path and every
// node below it) and calls fn with its events (see PersistentWatch) until
// Stop. The node need not exist. ZooKeeper keeps one watch per session and
// path, so watches of this client on one path share it, and a path can
// have watches of one mode only: adding the other mode is refused
// (curator.ErrInvalidArgument, ZOOKEEPER-4466). One-shot watches (GetW,
// ChildrenW, ExistsW) of the same path keep working beside it. A server
// before ZooKeeper 3.6 refuses: curator.ErrUnimplemented (it may also
// drop the connection; the call is then retried until it gets the refusal
// or its retry policy gives up). Stop the watch to remove it from the
// server.
func (c *Client) AddWatch(ctx context.Context, path string, recursive bool, fn func(Event)) (*PersistentWatch, error) {
	const op = "addWatch"
	if fn == nil {
		return nil, &OpError{op, path, fmt.Errorf("%w: nil function", curator.ErrInvalidArgument)}
	}
	full, err := c.checkPath(op, path)
	if err != nil {
		return nil, err
	}
	if c.isClosed() {
		return nil, &OpError{op, path, curator.ErrClosed}
	}
	r := c.persist
	unlock := r.lock(full)
	defer unlock()
	w := &PersistentWatch{c: c, reg: r, full: full, path: path, recursive: recursive, fn: fn}
	w.q.run = fn
	r.mu.Lock()
	if e := r.m[full]; e != nil {
		defer r.mu.Unlock()
		if e.recursive != recursive {
			return nil, &OpError{op, path, fmt.Errorf("%w: a persistent watch of the other mode (recursive %v) is held on this path by this client; ZooKeeper keeps one mode per session and path (ZOOKEEPER-4466)", curator.ErrInvalidArgument, e.recursive)}
		}
		e.subs = append(e.subs, w) // held (or an orphan the server may hold: SetWatches2 keeps it)
		return w, nil
	}
	e := &persistEntry{recursive: recursive}
	r.m[full] = e // before the write: no one-shot watch of full from now on (persistReg)
	r.n.Store(int32(len(r.m)))
	r.mu.Unlock()
	mode := int32(0)
	if recursive {
		mode = 1
	}
	body := binary.BigEndian.AppendUint32(appendString(nil, full), uint32(mode))
	_, err = call(c, ctx, op, path, func(conn *zk.Conn) (struct{}, error) {
		return struct{}{}, c.sendOwn(conn, opAddWatch, body, nil)
	})
	r.mu.Lock()
	held := r.m[full] == e
	if err == nil && held {
		e.subs = append(e.subs, w)
		r.mu.Unlock()
		return w, nil
	}
	if held { // failed: the server may hold it after all (a lost reply); removing is safe
		delete(r.m, full)
		r.n.Store(int32(len(r.m)))
	}
	r.mu.Unlock()
	if held {
		c.watches.release(full)
	}
	if err == nil { // the session ended meanwhile
		err = &OpError{op, path, curator.ErrSessionLost}
		if c.isClosed() {
			err = &OpError{op, path, curator.ErrClosed}
		}
	}
	return nil, err
}

// Stop removes the watch: its function is not called from now on (unless
// its call had begun), and the last watch of this client on the path is
// removed from the server (removeWatches, in the retry loop, bounded by
// ctx), after which the server holds no watch of ours there. If that
// fails, the error says why and the server may keep the watch until the
// session ends (the client still does not call fn). Stop after the watch
// ended (session lost, client closed) or a second Stop returns nil.
func (w *PersistentWatch) Stop(ctx context.Context) error {
	const op = "removeWatches"
	if ctx == nil {
		return &OpError{op, w.path, fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)}
	}
	w.q.add(func([]Event) []Event {
		w.ended = true
		return nil
	})
	r, c := w.reg, w.c
	unlock := r.lock(w.full)
	defer unlock()
	r.mu.Lock()
	e := r.m[w.full]
	i := -1
	if e != nil {
		for j, s := range e.subs {
			if s == w {
				i = j
			}
		}
	}
	if i < 0 {
		r.mu.Unlock()
		return nil
	}
	e.subs = append(e.subs[:i], e.subs[i+1:]...)
	if len(e.subs) > 0 {
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	body := binary.BigEndian.AppendUint32(appendString(nil, w.full), watcherTypeAny)
	// Removed on the reading goroutine when the reply is read, before any
	// packet behind it: an event of full read after it is no event of
	// this watch, and a one-shot read of full written after it sets its
	// watch (it must: the server holds none of ours there any more).
	done := func(l *link, code int32) {
		if code != codeOK && code != codeNoWatcher {
			return
		}
		r.mu.Lock()
		if r.m[w.full] == e && len(e.subs) == 0 {
			delete(r.m, w.full)
			r.n.Store(int32(len(r.m)))
		}
		r.mu.Unlock()
		l.forgetHeld(w.full)
		c.watches.release(w.full)
	}
	_, err := call(c, ctx, op, w.path, func(conn *zk.Conn) (struct{}, error) {
		err := c.sendOwn(conn, opRemoveWatches, body, done)
		if errors.Is(err, errNoWatcher) {
			err = nil // gone already (the session changed, or a retry of ours)
		}
		return struct{}{}, err
	})
	if err != nil {
		if errors.Is(err, curator.ErrClosed) || errors.Is(err, curator.ErrSessionLost) {
			return nil // gone with the session
		}
		return err
	}
	return nil
}

// WatcherType Any of removeWatches (ZooKeeper 3.8 has no persistent type:
// Curator removes persistent watches with Any; ZOOKEEPER-4472 added them
// later).
const watcherTypeAny = 3

// sendOwn sends an own request on conn's link (ownreq.go) and maps its
// reply code to an error.
func (c *Client) sendOwn(conn *zk.Conn, op int32, body []byte, onReply func(*link, int32)) error {
	_, err := c.ownRequest(conn, op, body, onReply, false)
	return err
}

// ownRequest sends an own request on the link of conn, the connection
// of the call's attempt (another connection by now: errOwnLost, which the
// retry loop retries), and maps its reply code to an error; with
// wantBody, the reply's body comes back too.
func (c *Client) ownRequest(conn *zk.Conn, op int32, body []byte, onReply func(*link, int32), wantBody bool) ([]byte, error) {
	c.mu.Lock()
	l := c.link
	same := c.conn == conn
	c.mu.Unlock()
	if !same {
		return nil, errOwnLost
	}
	var f func(int32)
	if onReply != nil {
		f = func(code int32) { onReply(l, code) }
	}
	r, err := l.send(op, body, f, wantBody)
	if err != nil {
		return nil, err
	}
	return r.body, codeError(r.code)
}

// forgetHeld drops the one-shot watches of path the link holds: a
// removeWatches (Any) removed them on the server.
func (l *link) forgetHeld(path string) {
	l.mu.Lock()
	for _, k := range []watchKind{watchData, watchExist, watchChild} {
		delete(l.held, watchKey{path, k})
	}
	l.mu.Unlock()
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// release fires every one-shot entry of path (server path) at once: a
// spurious wakeup (see persistReg).
func (m *watchMux) release(path string) {
	var calls []afterCall
	m.mu.Lock()
	calls = m.fireKey(watchKey{path, watchData}, Event{Type: EventNodeDataChanged}, calls)
	calls = m.fireKey(watchKey{path, watchExist}, Event{Type: EventNodeCreated}, calls)
	calls = m.fireKey(watchKey{path, watchChild}, Event{Type: EventNodeChildrenChanged}, calls)
	m.mu.Unlock()
	m.runAfter(calls)
}
