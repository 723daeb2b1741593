package framework

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

// EventType is the kind of a watch event.
type EventType int

const (
	EventNodeCreated EventType = iota + 1
	EventNodeDeleted
	EventNodeDataChanged
	EventNodeChildrenChanged
	// EventNotWatching: the watch ended without a node event because the
	// session was lost or the client closed; Event.Err says which.
	EventNotWatching
	// EventMissed (persistent watches only): events may have been missed,
	// because the connection was resumed (ZooKeeper does not replay what
	// changed while disconnected to a persistent watch) or the consumer
	// fell too far behind; the watch goes on. Re-read what you watch.
	EventMissed
)

func (t EventType) String() string {
	switch t {
	case EventNodeCreated:
		return "NodeCreated"
	case EventNodeDeleted:
		return "NodeDeleted"
	case EventNodeDataChanged:
		return "NodeDataChanged"
	case EventNodeChildrenChanged:
		return "NodeChildrenChanged"
	case EventNotWatching:
		return "NotWatching"
	case EventMissed:
		return "Missed"
	}
	return "Unknown"
}

// Event is what a Watch delivers: once, then the watch is spent.
type Event struct {
	Type EventType
	Path string // as the caller named it
	Err  error  // for EventNotWatching: curator.ErrSessionLost or curator.ErrClosed
}

type watchKind int

const (
	watchData watchKind = iota
	watchExist
	watchChild
)

type watchKey struct {
	path string // server path
	kind watchKind
}

// Watch is a one-shot watch set by GetW, ChildrenW or ExistsW. It delivers
// exactly one Event on C(). Stop it when you stop waiting: ZooKeeper
// (through go-zookeeper) cannot remove a watch from the server, but Stop
// drops everything the client keeps for this waiter. At most one server
// watch per path and kind is ever asked for, however many waiters come
// and go.
type Watch struct {
	mux  *watchMux
	key  watchKey
	ch   chan Event
	path string
	fn   func(Event) // set by AfterFunc, under mux.mu
}

// C returns the channel the event arrives on (buffered; delivered once).
func (w *Watch) C() <-chan Event { return w.ch }

// Stop unregisters the watch. It is safe to call more than once, and after
// the event arrived. After Stop, a function given to AfterFunc is not
// called, unless its call had begun.
func (w *Watch) Stop() { w.mux.remove(w) }

// AfterFunc arranges for f to be called with the watch's event instead
// of delivering it on C: for a caller that keeps many watches (a cache
// keeps one or two per node), no goroutine of its own waits on each. The
// client calls the functions of its watches one at a time, in the order
// of their events, on a goroutine that runs while calls are due; so f
// must not block for long. If the event has arrived already, f is called
// at once, on a goroutine of its own. Call AfterFunc at most once per
// watch.
func (w *Watch) AfterFunc(f func(Event)) {
	m := w.mux
	m.mu.Lock()
	select {
	case ev := <-w.ch:
		m.mu.Unlock()
		m.runAfter([]afterCall{{f, ev}})
		return
	default:
	}
	w.fn = f
	m.mu.Unlock()
}

// watchEntry is our record of one server watch (path, kind): armed once
// the server confirmed it, with the waiters to tell when it fires.
type watchEntry struct {
	armed bool
	subs  []*Watch // usually one: a slice costs far less than a map per entry
}

// watchMux fans the server's watch events (seen through go-zookeeper's
// event callback) out to our waiters.
type watchMux struct {
	mu      sync.Mutex
	entries map[watchKey]*watchEntry

	after serial[afterCall] // AfterFunc calls due, in event order (runAfter)
}

func newWatchMux() *watchMux {
	return &watchMux{entries: map[watchKey]*watchEntry{}, after: serial[afterCall]{run: func(c afterCall) { c.fn(c.ev) }}}
}

// add registers a waiter and reports whether a server watch is already
// armed (then a plain read suffices: the armed watch fires on any change
// after it was set, which is before this read).
func (m *watchMux) add(key watchKey, userPath string) (*Watch, *watchEntry, bool) {
	w := &Watch{mux: m, key: key, ch: make(chan Event, 1), path: userPath}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	if e == nil {
		e = &watchEntry{}
		m.entries[key] = e
	}
	e.subs = append(e.subs, w)
	return w, e, e.armed
}

// armed records that the server confirmed the watch for e; if e has fired
// meanwhile, nothing is recorded.
func (m *watchMux) armed(key watchKey, e *watchEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries[key] == e {
		e.armed = true
	}
}

// failed drops a waiter whose read failed (no server watch was set for it).
func (m *watchMux) failed(w *Watch, e *watchEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.drop(w)
	if len(e.subs) == 0 && !e.armed && m.entries[w.key] == e {
		delete(m.entries, w.key)
	}
}

// drop removes w from e's waiters, if there.
func (e *watchEntry) drop(w *Watch) {
	for i, s := range e.subs {
		if s == w {
			last := len(e.subs) - 1
			e.subs[i], e.subs[last] = e.subs[last], nil
			e.subs = e.subs[:last]
			return
		}
	}
}

func (m *watchMux) remove(w *Watch) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[w.key]; e != nil {
		e.drop(w)
		// An armed entry with no waiter stays until the server fires it: it
		// stands for the server-side watch, so that a later waiter on the
		// same node does not arm another one.
		if len(e.subs) == 0 && !e.armed {
			delete(m.entries, w.key)
		}
	}
}

// afterCall is an AfterFunc's function and its event, called once m.mu is
// released.
type afterCall struct {
	fn func(Event)
	ev Event
}

func (m *watchMux) fireKey(key watchKey, ev Event, calls []afterCall) []afterCall {
	e := m.entries[key]
	if e == nil {
		return calls
	}
	delete(m.entries, key)
	for _, w := range e.subs {
		ev.Path = w.path
		if w.fn != nil {
			calls = append(calls, afterCall{w.fn, ev})
			continue
		}
		w.ch <- ev // buffered, delivered once: an entry fires at most once
	}
	return calls
}

// runAfter queues the AfterFunc functions of one fire, to be called in
// order, after those of earlier fires, one at a time, on a goroutine that
// runs while the queue is not empty: never on go-zookeeper's (its event
// callback must not block) nor under m.mu (a function may take its
// caller's lock, under which the caller stops watches).
func (m *watchMux) runAfter(calls []afterCall) {
	if len(calls) == 0 {
		return
	}
	m.after.add(func(q []afterCall) []afterCall { return append(q, calls...) })
}

// serial calls run with each item queued, in order, one at a time, on a
// goroutine that runs only while items are due (so no goroutine waits per
// watch, and none is left once the queue is empty). The AfterFunc calls
// of the one-shot watches and each persistent watch's events use it.
type serial[T any] struct {
	run      func(T)
	mu       sync.Mutex // guards queue, draining, and what add's functions guard with it
	queue    []T
	draining bool // a goroutine is calling run
}

// add sets the queue to f(queue), under the queue's lock, and starts a
// goroutine to call run if items are due and none is.
func (s *serial[T]) add(f func(q []T) []T) {
	s.mu.Lock()
	s.queue = f(s.queue)
	start := !s.draining && len(s.queue) > 0
	s.draining = s.draining || start
	s.mu.Unlock()
	if start {
		go s.drain()
	}
}

func (s *serial[T]) drain() {
	var zero T
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.draining = false
			s.queue = nil
			s.mu.Unlock()
			return
		}
		it := s.queue[0]
		s.queue[0] = zero
		s.queue = s.queue[1:]
		s.mu.Unlock()
		s.run(it)
	}
}

// fire delivers a node event to the waiters of the matching kinds, as
// ZooKeeper's client does (notifyWatches).
func (m *watchMux) fire(t zk.EventType, path string) {
	var (
		et    EventType
		kinds []watchKind
	)
	switch t {
	case zk.EventNodeCreated:
		et, kinds = EventNodeCreated, []watchKind{watchExist}
	case zk.EventNodeDataChanged:
		et, kinds = EventNodeDataChanged, []watchKind{watchExist, watchData}
	case zk.EventNodeChildrenChanged:
		et, kinds = EventNodeChildrenChanged, []watchKind{watchChild}
	case zk.EventNodeDeleted:
		et, kinds = EventNodeDeleted, []watchKind{watchExist, watchData, watchChild}
	default:
		return
	}
	var calls []afterCall
	m.mu.Lock()
	for _, k := range kinds {
		calls = m.fireKey(watchKey{path, k}, Event{Type: et}, calls)
	}
	m.mu.Unlock()
	m.runAfter(calls)
}

func (m *watchMux) invalidateAll(err error) {
	var calls []afterCall
	m.mu.Lock()
	for k := range m.entries {
		calls = m.fireKey(k, Event{Type: EventNotWatching, Err: err}, calls)
	}
	m.mu.Unlock()
	m.runAfter(calls)
}

// size returns how many watch entries and waiters the client keeps.
func (m *watchMux) size() (entries, waiters int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.armed {
			entries++
		}
		waiters += len(e.subs)
	}
	return entries, waiters
}

// WatchStats returns how many server watches the client knows to be set
// (confirmed by the server, not yet fired) and how many waiters wait on
// watches, including those whose read is still in flight. With every waiter
// stopped, waiters is zero; tests use it to prove nothing of a waiter stays
// behind.
func (c *Client) WatchStats() (armed, waiters int) { return c.watches.size() }
