package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
)

// Node is one cached node: its path, data (nil WithoutData) and stat.
// Curator's ChildData.
type Node struct {
	Path string
	Data []byte
	Stat framework.Stat
}

// EventType is the kind of an Event.
type EventType int

const (
	// EventCreated: a node is new to the consumer (New set, Old nil).
	EventCreated EventType = iota + 1
	// EventChanged: a node's data or stat changed (Old and New set, same
	// Czxid).
	EventChanged
	// EventDeleted: a node the consumer knew is gone (Old set, New nil).
	EventDeleted
	// EventInitialized: the first full load is done; every node of it
	// was delivered before.
	EventInitialized
	// EventRebuilt: after a session loss the cache read every node again;
	// the differences it found were delivered before. One per session
	// loss the client reports (framework.StateLost), none for a mere
	// reconnection.
	EventRebuilt
)

func (t EventType) String() string {
	switch t {
	case EventCreated:
		return "created"
	case EventChanged:
		return "changed"
	case EventDeleted:
		return "deleted"
	case EventInitialized:
		return "initialized"
	case EventRebuilt:
		return "rebuilt"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is a change of the cache as its consumer sees it (Curator's
// CuratorCacheListener.event): the difference between the node as last
// delivered (Old) and as it is now (New).
type Event struct {
	Type     EventType
	Path     string
	Old, New *Node
}

// Cache is Curator's CuratorCache: a node and its subtree (to a maximum
// depth, through a filter) kept in memory and up to date, with events.
// NodeCache is WithMaxDepth(0), PathChildrenCache WithMaxDepth(1) (the
// path itself included), TreeCache WithMaxDepth(d).
//
// On ZooKeeper 3.6+ it runs as CuratorCache does: one persistent
// recursive watch on the root (framework.AddWatch), set before the first
// read, and reads without watches (the data in multiReads, children
// listed only where a node has some); after a resumed connection, which
// persistent watches do not replay, it reads every cached node again and
// reports only real differences (recursive.go). On older servers, and
// WithOneShotWatches, it runs on standard watches instead: one data watch
// per cached node and one child watch per cached parent; a change costs
// O(1) reads (a new node: its data and, if descended, its children; a
// changed one: its data; a parent's change: its listing), never a
// re-read of the tree; after a reconnection the client sets the watches
// again and those that missed a change fire. Either way, after a session
// loss every cached node is read again (EventRebuilt), and only real
// differences are reported.
//
// Delivery: events go to listeners (AddListener) and the Events channel
// from one goroutine of the cache, never from the client's, in the order
// of the nodes' changes, each node's in version order. A slow consumer
// never slows the cache: while it lags, the changes of a node coalesce to
// the difference between what it was last told and the latest state
// (intermediate states may be skipped, the last never; a node deleted and
// made again is told as deleted then created).
type Cache struct {
	client *framework.Client
	root   string
	o      options

	mu           sync.Mutex
	nodes        map[string]*entry
	tasks        []task
	queued       map[task]bool
	busy         map[string]bool // paths with a read in flight: one at a time per path
	running      int             // reads in flight
	retrying     int
	wake         chan struct{}
	started      bool
	closed       bool
	inited       bool
	lost         int  // session losses the client told of since Start
	handled      int  // of which a rebuild has begun
	owed         int  // Rebuilt events due once the rebuild under way is done
	rebuilding   bool // a rebuild is under way
	initDone     chan struct{}
	unlisten     func()       // removes onState from the client
	hookRetry    func(t task) // tests: runs before a failed task is queued again
	hookAddWatch func() error // tests: its error stands for addWatch's

	// The persistent recursive watch (recursive mode: recursive.go).
	recursive bool                       // the cache runs on one persistent recursive watch
	pw        *framework.PersistentWatch // held in the current session; nil if none
	pwSession *framework.Session         // the session pw was added in (Session() before the add)
	pwGen     int                        // numbers the watches added: an old one's end is ignored
	orphans   map[string][]string        // parent -> nodes whose read found it not yet cached
	noMulti   bool                       // the server has no multiRead: reads one by one

	dmu       sync.Mutex
	dirty     []string // paths and markers to deliver, in order
	isDirty   map[string]bool
	view      map[string]*Node // what the consumer was told
	dwake     chan struct{}
	listeners recipe.Listeners[Event]
	events    chan Event

	stop context.CancelFunc
	ctx  context.Context
	wg   sync.WaitGroup
	met  *telemetry.Cache // metrics.go
}

type entry struct {
	node  Node
	kids  map[string]bool // listed names, nil until listed
	dataW *armed
	kidsW *armed
}

// armed is a watch of the cache. Its event comes through the framework's
// AfterFunc: no goroutine of the cache waits on a watch (a goroutine per
// watch cost 2-3 KB of stack per node: 50 MB for a 10,000-node tree).
type armed struct {
	w *framework.Watch
}

func (a *armed) stop() {
	if a != nil {
		a.w.Stop()
	}
}

// maxReads bounds the reads a cache has in flight at once. One at a time,
// a 10,000-node tree (20,000 reads: each node's data and children) loads
// in 20,000 round trips one after another, and under a steady stream of
// changes the reads queue up behind each other; go-zookeeper pipelines
// concurrent requests on its one connection, so that reads in flight
// together share their round trips. Reads of one path still run one at a
// time (busy), in the order they were queued.
const maxReads = 64

type taskKind int

const (
	readData taskKind = iota
	readKids
	addWatch // recursive mode: add the persistent recursive watch, then read everything
)

type task struct {
	path string
	kind taskKind
}

// markers in the delivery queue (no path starts with a space).
const (
	markInitialized = " initialized"
	markRebuilt     = " rebuilt"
)

// New returns a Cache of path and its subtree, not started. Errors wrap
// curator.ErrInvalidArgument.
func New(client *framework.Client, path string, opts ...Option) (*Cache, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", curator.ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("cache path: %w", err)
	}
	o := options{maxDepth: -1}
	if err := recipe.Apply(&o, opts); err != nil {
		return nil, err
	}
	c := &Cache{client: client, root: path, o: o, recursive: !o.oneShot && !defaultOneShot, orphans: map[string][]string{},
		nodes: map[string]*entry{}, queued: map[task]bool{}, busy: map[string]bool{},
		wake: make(chan struct{}, 1), initDone: make(chan struct{}), isDirty: map[string]bool{},
		view: map[string]*Node{}, dwake: make(chan struct{}, 1)}
	c.met = newMetrics(c)
	return c, nil
}

// Start starts the cache and waits until its first full load is done, or
// ctx ends: then its error, and the cache goes on loading. Once it
// returns, Get and Snapshot see the whole load; its events (every node's,
// then EventInitialized) may still be on their way to the listeners and
// the Events channel, and a change made meanwhile coalesces with them (a
// node's Created may carry its changed state). Starting twice is
// curator.ErrBusy; after Close curator.ErrClosed.
func (c *Cache) Start(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return fmt.Errorf("cache %s: %w", c.root, curator.ErrClosed)
	case c.started:
		c.mu.Unlock()
		return fmt.Errorf("cache %s: %w: already started", c.root, curator.ErrBusy)
	}
	c.started = true
	c.ctx, c.stop = context.WithCancel(context.Background())
	if c.recursive {
		c.enqueueLocked(task{c.root, addWatch}) // before the first read: nothing falls between
	} else {
		c.enqueueLocked(task{c.root, readData})
	}
	c.mu.Unlock()
	c.unlisten = c.client.AddListener(c.onState)
	c.wg.Add(2)
	go c.loop()
	go c.deliver()
	select {
	case <-c.initDone:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cache %s: %w", c.root, ctx.Err())
	}
}

// Initialized returns a channel closed once the first full load is done.
func (c *Cache) Initialized() <-chan struct{} { return c.initDone }

// Get returns the cached node at path.
func (c *Cache) Get(path string) (Node, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.nodes[path]
	if e == nil {
		return Node{}, false
	}
	return e.node.copy(), true
}

// Snapshot returns a copy of every cached node, by path.
func (c *Cache) Snapshot() map[string]Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]Node, len(c.nodes))
	for p, e := range c.nodes {
		m[p] = e.node.copy()
	}
	return m
}

// Size returns how many nodes are cached.
func (c *Cache) Size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.nodes)
}

// AddListener adds fn, called on the cache's delivery goroutine for every
// event from now on; remove removes it.
func (c *Cache) AddListener(fn func(Event)) (remove func()) {
	return c.listeners.Add(fn)
}

// Events returns a channel of every event from its first call on, closed
// by Close. Read it: while it is not read, events coalesce (see Cache) and
// listeners wait.
func (c *Cache) Events() <-chan Event {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	if c.events == nil {
		c.events = make(chan Event)
	}
	return c.events
}

// Close stops the cache: every goroutine of it ends and every watch
// waiter is stopped before it returns; the persistent watch is removed
// from the server (bounded by the client's session timeout; one-shot
// mode: ZooKeeper keeps the server's side of a watch until it fires). The
// cached nodes stay readable. Closing twice is a no-op. Not from a listener: it
// waits for the goroutine that calls the listeners.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.met.Closed()
	stop, unlisten, pw := c.stop, c.unlisten, c.pw
	c.pw = nil
	for _, e := range c.nodes {
		e.dataW.stop()
		e.kidsW.stop()
		e.dataW, e.kidsW = nil, nil
	}
	c.mu.Unlock()
	if unlisten != nil {
		unlisten()
	}
	if stop != nil {
		stop()
	}
	c.stopWatch(pw)
	c.wg.Wait()
	c.dmu.Lock()
	if c.events != nil {
		close(c.events)
	}
	c.dmu.Unlock()
	return nil
}

func (n Node) copy() Node {
	if n.Data != nil {
		n.Data = append([]byte{}, n.Data...)
	}
	return n
}

// depth is path's depth below the root (the root: 0).
func (c *Cache) depth(path string) int {
	if path == c.root {
		return 0
	}
	rest := strings.TrimPrefix(path, c.root)
	if c.root == "/" {
		rest = path
	}
	return strings.Count(rest, "/")
}

func (c *Cache) enqueueLocked(t task) {
	if c.queued[t] {
		return
	}
	c.queued[t] = true
	c.tasks = append(c.tasks, t)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Cache) enqueue(t task) {
	c.mu.Lock()
	c.enqueueLocked(t)
	c.mu.Unlock()
}

func (c *Cache) wakeLocked() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// onState counts the client's session losses: each is one rebuild and one
// EventRebuilt, once a new session lives (a reconnection wakes the loop
// for it). The count comes from the client's LOST, not from the watches
// a loss ends: those said "rebuild" once per watch, so a watch set by a
// read in flight across the loss (the framework retries it in the new
// session, and its waiter is told of the old one's loss) could ask again
// after the rebuild was done: two Rebuilt for one loss; and a loss while
// the cache held no watch (each had fired, the reads failing and waiting
// to be retried) asked for none: no Rebuilt
// (TestCacheRebuiltWithNoWatchArmed).
func (c *Cache) onState(s framework.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == framework.StateLost {
		c.lost++
	}
	c.wakeLocked()
}

// loop runs the tasks, up to maxReads at once and one at a time per path,
// until the cache closes.
func (c *Cache) loop() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if s := c.client.Session(); c.lost > c.handled && s != nil && !s.Lost() {
			// Every node whose watch the loss ended is read again (its
			// watch's waiter queued it too, if it was told already).
			for range c.lost - c.handled {
				c.met.Rebuild()
			}
			c.owed += c.lost - c.handled
			c.handled, c.rebuilding = c.lost, true
			if c.recursive {
				// The watch is set again, and then everything read.
				c.enqueueLocked(task{c.root, addWatch})
			} else {
				c.enqueueLocked(task{c.root, readData})
				for p, e := range c.nodes {
					if e.dataW == nil {
						c.enqueueLocked(task{p, readData})
					}
				}
			}
		}
		var markers []string
		if len(c.tasks) == 0 && c.retrying == 0 && c.running == 0 {
			if !c.inited {
				c.inited = true
				close(c.initDone)
				markers = append(markers, markInitialized)
			}
			if c.rebuilding && c.lost == c.handled {
				c.rebuilding = false
				for ; c.owed > 0; c.owed-- {
					markers = append(markers, markRebuilt)
				}
			}
		}
		t, have := c.nextLocked(false)
		var batch []task
		if have && t.kind == readData && c.recursive && !c.noMulti {
			batch = append(batch, t)
			for len(batch) < maxBatch {
				u, ok := c.nextLocked(true)
				if !ok {
					break
				}
				batch = append(batch, u)
			}
		}
		c.mu.Unlock()
		for _, m := range markers {
			c.mark(m) // not under c.mu: delivery takes c.mu under c.dmu
		}
		if !have {
			select {
			case <-c.wake:
				continue
			case <-c.ctx.Done():
				return
			}
		}
		if c.ctx.Err() != nil {
			c.done(t)
			return
		}
		c.wg.Add(1)
		if len(batch) > 1 {
			go c.runBatch(batch)
		} else {
			go c.run(t)
		}
	}
}

// nextLocked takes the first queued task whose path has no read in
// flight, if fewer than maxReads are (dataOnly: the first such read of
// data).
func (c *Cache) nextLocked(dataOnly bool) (task, bool) {
	limit := maxReads
	if c.recursive && !c.noMulti {
		limit = maxBatches * maxBatch // reads in a few multiReads
	}
	if c.running >= limit {
		return task{}, false
	}
	for i, t := range c.tasks {
		if c.busy[t.path] || dataOnly && t.kind != readData {
			continue
		}
		if i == 0 {
			c.tasks[0] = task{}
			c.tasks = c.tasks[1:]
		} else {
			c.tasks = slices.Delete(c.tasks, i, i+1)
		}
		delete(c.queued, t)
		c.busy[t.path] = true
		c.running++
		return t, true
	}
	return task{}, false
}

// done ends t's run: its path is free again, and the loop may start
// another read.
func (c *Cache) done(t task) {
	c.mu.Lock()
	delete(c.busy, t.path)
	c.running--
	c.wakeLocked()
	c.mu.Unlock()
}

// run reads for t, on a goroutine of its own.
func (c *Cache) run(t task) {
	defer c.wg.Done()
	var err error
	switch t.kind {
	case readData:
		err = c.readData(t.path)
	case readKids:
		err = c.readKids(t.path)
	case addWatch:
		err = c.addWatch()
	}
	c.settle(t, err)
}

// settle ends t's run with its outcome.
func (c *Cache) settle(t task, err error) {
	switch {
	case errors.Is(err, zk.ErrNoAuth):
		// Not ours to read: left out of the cache, as a filter would
		// (retrying would never load; Curator reports it and goes on).
		c.client.Logger().Warn("cache: a node we may not read is left out", "path", t.path)
	case err != nil && c.ctx.Err() == nil:
		c.retry(t) // counted as retrying before the read counts as done
	}
	c.done(t)
}

// retry runs t again after a pause: the framework's retry loop gave up
// (a long disconnection); a session loss also rebuilds.
func (c *Cache) retry(t task) {
	c.mu.Lock()
	c.retrying++
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-time.After(200 * time.Millisecond):
		case <-c.ctx.Done():
		}
		if c.hookRetry != nil {
			c.hookRetry(t)
		}
		c.mu.Lock()
		c.retrying--
		if c.ctx.Err() == nil {
			c.enqueueLocked(t)
		}
		c.mu.Unlock()
	}()
}

// readData reads path's data and arms its data watch: the decision is on
// the same read that sets the watch, so a change after it fires the watch.
func (c *Cache) readData(path string) error {
	c.mu.Lock()
	e := c.nodes[path]
	watched := e != nil && e.dataW != nil
	c.mu.Unlock()
	if watched {
		// A decision on local knowledge: no read while our data watch on
		// the node is armed. Relies on: the server firing that watch on
		// any change or delete after the read that set it, and the client
		// setting it again after a reconnection (framework: SetWatches);
		// a watch ended by a session loss clears dataW (watch, below) and
		// rebuilds. Broken by: a watch lost with no event (none known).
		// Attacked by: TestCacheConvergesUnderChurn (connection dropped
		// mid-churn), TestCacheRebuildsAfterSessionExpiry.
		return nil
	}
	if c.isRecursive() {
		return c.readPlain(path)
	}
	data, st, w, err := c.client.GetW(c.ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return c.gone(path)
	}
	if err != nil {
		return err
	}
	if c.o.noData {
		data = nil
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		w.Stop()
		return nil
	}
	e = c.nodes[path]
	if e == nil {
		if path != c.root && c.nodes[framework.ParentPath(path)] == nil {
			// Its parent went meanwhile (a listing will tell again).
			c.mu.Unlock()
			w.Stop()
			return nil
		}
		e = &entry{}
		c.nodes[path] = e
		c.sized()
	}
	// A change is of the node's data (mzxid) or the node itself (czxid: made
	// again); its children's changes show in the stat (cversion,
	// numChildren, pzxid), kept fresh by each listing too, but are no event
	// of the node, as in Curator.
	changed := e.node.Path == "" || st.Mzxid != e.node.Stat.Mzxid || st.Czxid != e.node.Stat.Czxid
	stale := e.node.Path != "" && st.Czxid == e.node.Stat.Czxid && st.Mzxid < e.node.Stat.Mzxid
	if !stale {
		e.node = Node{Path: path, Data: data, Stat: *st}
	}
	a := &armed{w}
	e.dataW = a
	descend := (c.o.maxDepth < 0 || c.depth(path) < c.o.maxDepth) && e.kidsW == nil
	if descend {
		c.enqueueLocked(task{path, readKids})
	}
	c.mu.Unlock()
	c.watch(a, path, readData)
	if changed && !stale {
		c.markPath(path)
	}
	return nil
}

// gone removes path, found missing by a read; the root missing is then
// awaited (whichever read found it gone: its data watch's waiter may have
// been stopped by the removal).
func (c *Cache) gone(path string) error {
	c.remove(path)
	if path == c.root && !c.isRecursive() { // a recursive watch tells when it is made
		return c.awaitRoot()
	}
	return nil
}

// awaitRoot watches for the root to be made, with an exists watch: the
// one watch that fires on a create (a getData of a missing node sets none).
// It stays on the server until the root is made: one per cache.
func (c *Cache) awaitRoot() error {
	ok, _, w, err := c.client.ExistsW(c.ctx, c.root)
	if err != nil {
		return err
	}
	if ok { // made meanwhile: read it (its watch fires too, harmlessly)
		w.Stop()
		c.enqueue(task{c.root, readData})
		return nil
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case ev := <-w.C():
			if ev.Type == framework.EventNotWatching && !errors.Is(ev.Err, curator.ErrSessionLost) {
				return // the client closed
			}
			// Made, or the session lost (the root is read again, in the
			// new session, and awaited again if still missing).
			c.enqueue(task{c.root, readData})
		case <-c.ctx.Done():
			w.Stop()
		}
	}()
	return nil
}

// readKids lists path's children and arms its child watch; new children
// are read, gone ones removed.
func (c *Cache) readKids(path string) error {
	c.mu.Lock()
	e := c.nodes[path]
	skip := e == nil || e.kidsW != nil
	c.mu.Unlock()
	if skip {
		return nil
	}
	if c.isRecursive() {
		return c.listPlain(path)
	}
	kids, st, w, err := c.client.ChildrenW(c.ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return c.gone(path)
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	e = c.nodes[path]
	if e == nil || c.closed {
		c.mu.Unlock()
		w.Stop()
		return nil
	}
	a := &armed{w}
	e.kidsW = a
	if st.Czxid == e.node.Stat.Czxid && st.Mzxid == e.node.Stat.Mzxid && st.Pzxid >= e.node.Stat.Pzxid {
		e.node.Stat = *st // the children's side of the stat, fresh (no event)
	}
	listed := make(map[string]bool, len(kids))
	var gone []string
	for _, k := range kids {
		child := framework.JoinPath(path, k)
		if c.o.filter != nil && !c.o.filter(child) {
			continue
		}
		listed[k] = true
		if c.nodes[child] == nil {
			c.enqueueLocked(task{child, readData})
		}
	}
	for k := range e.kids {
		if !listed[k] {
			gone = append(gone, framework.JoinPath(path, k))
		}
	}
	e.kids = listed
	c.mu.Unlock()
	c.watch(a, path, readKids)
	for _, g := range gone {
		c.remove(g)
	}
	return nil
}

// watch arranges for a's event to queue the read it calls for: the
// node's data (changed, deleted, or made again), its children; a watch
// ended by a session loss rebuilds.
func (c *Cache) watch(a *armed, path string, kind taskKind) {
	a.w.AfterFunc(func(ev framework.Event) { c.fired(a, path, kind, ev) })
}

// fired handles a's event (on the framework's goroutine: it only queues).
func (c *Cache) fired(a *armed, path string, kind taskKind, ev framework.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	e := c.nodes[path]
	if e == nil {
		return // removed (its watches stopped; this one fired meanwhile)
	}
	switch {
	case kind == readData && e.dataW == a:
		e.dataW = nil
	case kind == readKids && e.kidsW == a:
		e.kidsW = nil
	default:
		return // stopped or replaced meanwhile
	}
	if ev.Type == framework.EventNotWatching && !errors.Is(ev.Err, curator.ErrSessionLost) {
		return // the client closed
	}
	// A node event, or the session lost: read it again (in the new
	// session; the rebuild, counted by onState, reads it too).
	c.enqueueLocked(task{path, kind})
}

// remove drops path and everything cached below it (deepest first).
func (c *Cache) remove(path string) {
	c.mu.Lock()
	var gone []string
	prefix := path + "/"
	if path == "/" {
		prefix = "/"
	}
	delete(c.orphans, path)
	for p := range c.nodes {
		if p == path || strings.HasPrefix(p, prefix) {
			gone = append(gone, p)
		}
	}
	for _, p := range gone {
		e := c.nodes[p]
		e.dataW.stop()
		e.kidsW.stop()
		delete(c.nodes, p)
		delete(c.orphans, p)
	}
	c.sized()
	if parent := c.nodes[framework.ParentPath(path)]; parent != nil && parent.kids != nil {
		delete(parent.kids, framework.NodeName(path))
	}
	c.mu.Unlock()
	sort.Slice(gone, func(i, j int) bool { return c.depth(gone[i]) > c.depth(gone[j]) }) // deepest first
	for _, p := range gone {
		c.markPath(p)
	}
}
