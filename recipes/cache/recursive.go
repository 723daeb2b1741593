package cache

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// Recursive mode: CuratorCache's way. One persistent recursive watch on
// the root (framework.AddWatch; non-recursive for WithMaxDepth(0), as
// Curator's SINGLE_NODE_CACHE), set before the first read so that no
// change falls between, and reads without watches: each node's data,
// and its children only when its stat says it has some (NumChildren > 0)
// and they were never listed or its cversion moved: a recursive watch
// reports the creation of every descendant, so a leaf needs no listing
// (a 10,111-node tree loads in about 10,200 plain reads, not 20,222
// watched ones). An event queues a read of its node (created, changed:
// its data, then its children if it has some; deleted: the read finds it
// gone and removes it with what is cached below). Reads of one path run
// one at a time, in order (Cache.busy), so a read that saw a node before
// its deletion never lands after the deletion's.
//
// Missed events: after a resumed connection (framework.EventMissed:
// persistent watches do not replay what changed while disconnected) every
// cached node is read again, and children listed where cversion moved;
// only real differences are told, as after a session loss (which ends the
// watch: it is added again by the rebuild, then everything read).
//
// The depth and filter options hold: the watch reports everything below
// the root, and events of paths outside them are dropped.

// defaultOneShot makes New use one-shot watches (tests run every test in
// both modes: export_test.go).
var defaultOneShot bool

func (c *Cache) isRecursive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.recursive
}

// addWatch adds the persistent recursive watch of the root if the cache
// holds none in this session, then reads the root and every cached node.
// A server without addWatch (before ZooKeeper 3.6) makes the cache fall
// back to one-shot watches.
func (c *Cache) addWatch() error {
	c.mu.Lock()
	// Held in this session: a session loss's NotWatching may not have
	// reached onPersistent yet when the rebuild runs this.
	held := c.pw != nil && c.pwSession == c.client.Session()
	old := c.pw
	if !held {
		c.pwGen++
		c.pw = nil
	}
	gen := c.pwGen
	c.mu.Unlock()
	if !held {
		// One watch of the cache's at a time: an older one still alive
		// (added as a session ended) would hold the server's after Close.
		c.stopWatch(old)
		session := c.client.Session() // before: a watch added in a later session is added once more (the older stopped)
		// A cache of the root alone (WithMaxDepth(0), NodeCache) needs
		// no event of the subtree: a non-recursive watch (Curator's
		// SINGLE_NODE_CACHE), whose children events are ignored.
		recursive := c.o.maxDepth != 0
		var w *framework.PersistentWatch
		var err error
		if c.hookAddWatch != nil {
			err = c.hookAddWatch()
		}
		if err == nil {
			w, err = c.client.AddWatch(c.ctx, c.root, recursive, func(ev framework.Event) { c.onPersistent(gen, ev) })
		}
		// A persistent watch of the other mode on the root, held by this
		// client (another cache of it: one with WithMaxDepth(0) beside a
		// whole-tree one), is refused: the server keeps one mode per
		// session and path (ZOOKEEPER-4466; Curator's two caches would
		// overwrite each other's mode, and its recursive one go deaf
		// below the root). This cache falls back to one-shot watches, as
		// on a server without addWatch, rather than ask again forever.
		conflict := errors.Is(err, curator.ErrInvalidArgument)
		if conflict || errors.Is(err, curator.ErrUnimplemented) {
			why := "the server has no persistent watches (ZooKeeper before 3.6)"
			if conflict {
				why = "this client holds a persistent watch of the other mode on the root (ZOOKEEPER-4466)"
			}
			c.client.Logger().Warn("cache: using one-shot watches: "+why, "path", c.root)
			c.mu.Lock()
			c.recursive = false
			c.enqueueLocked(task{c.root, readData})
			c.mu.Unlock()
			return nil
		}
		if err != nil {
			return err
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			c.stopWatch(w)
			return nil
		}
		c.pw, c.pwSession = w, session
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.rereadLocked()
	c.mu.Unlock()
	return nil
}

// rereadLocked queues a read of the root and of every cached node.
func (c *Cache) rereadLocked() {
	c.enqueueLocked(task{c.root, readData})
	for p := range c.nodes {
		c.enqueueLocked(task{p, readData})
	}
}

// stopWait bounds Close's removal of the watch (a client cut off from
// the server: the server drops it with the session, or the client sets
// it again on resuming and a later Stop is not made; see
// framework.PersistentWatch.Stop).
const stopWait = 5 * time.Second

// stopWatch removes the persistent watch from the server (Close: the
// server holds no watch of the cache's after it).
func (c *Cache) stopWatch(w *framework.PersistentWatch) {
	if w == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(c.client.SessionTimeout(), stopWait))
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		c.client.Logger().Warn("cache: removing the persistent watch failed; the server keeps it until the session ends", "path", c.root, "err", err)
	}
}

// onPersistent handles an event of the watch numbered gen (on the
// framework's delivery goroutine: it only queues).
func (c *Cache) onPersistent(gen int, ev framework.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	switch ev.Type {
	case framework.EventNodeCreated, framework.EventNodeDataChanged, framework.EventNodeDeleted:
		// (NodeChildrenChanged, of a non-recursive watch, is ignored.)
		if c.inScope(ev.Path) {
			c.enqueueLocked(task{ev.Path, readData})
		}
	case framework.EventMissed: // a resumed connection (not a rebuild: the session lived)
		c.rereadLocked()
	case framework.EventNotWatching:
		if gen != c.pwGen {
			return // an older watch's end, told late
		}
		c.pw = nil
		if errors.Is(ev.Err, curator.ErrClosed) {
			return // the client closed
		}
		// The session lost (the rebuild adds the watch again, too: one
		// addWatch task, queued once), or the watch ended otherwise.
		c.enqueueLocked(task{c.root, addWatch})
	}
}

// inScope reports whether the cache keeps path, as far as its depth and
// filter say (its ancestors' being cached is readPlain's question).
func (c *Cache) inScope(path string) bool {
	if path == c.root {
		return true
	}
	prefix := c.root + "/"
	if c.root == "/" {
		prefix = "/"
	}
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	if c.o.maxDepth >= 0 && c.depth(path) > c.o.maxDepth {
		return false
	}
	return c.o.filter == nil || c.o.filter(path)
}

// readPlain reads path's data with no watch (recursive mode), and lists
// its children if it has some that were not listed or changed.
func (c *Cache) readPlain(path string) error {
	data, st, err := c.client.Get(c.ctx, path)
	return c.applyPlain(path, data, st, err)
}

// applyPlain takes in the outcome of a plain read of path's data.
func (c *Cache) applyPlain(path string, data []byte, st *framework.Stat, err error) error {
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
		return nil
	}
	e := c.nodes[path]
	if e == nil {
		if parent := framework.ParentPath(path); path != c.root && c.nodes[parent] == nil {
			// Its parent is not cached (yet). Read while its parent's read
			// is queued or under way (both made at once: this event's read
			// can land first, and the parent's read can come before the
			// node was made, with no child to list), it is read again once
			// the parent is cached; otherwise the parent is gone or out of
			// scope, and the node with it.
			if c.queued[task{parent, readData}] || c.busy[parent] {
				c.orphans[parent] = append(c.orphans[parent], path)
			}
			c.mu.Unlock()
			return nil
		}
		e = &entry{}
		c.nodes[path] = e
		c.sized()
		for _, o := range c.orphans[path] {
			c.enqueueLocked(task{o, readData})
		}
		delete(c.orphans, path)
	}
	changed := e.node.Path == "" || st.Mzxid != e.node.Stat.Mzxid || st.Czxid != e.node.Stat.Czxid
	stale := e.node.Path != "" && st.Czxid == e.node.Stat.Czxid && st.Mzxid < e.node.Stat.Mzxid
	if !stale {
		moved := e.kids == nil || st.Cversion != e.node.Stat.Cversion || st.Czxid != e.node.Stat.Czxid
		e.node = Node{Path: path, Data: data, Stat: *st}
		descend := c.o.maxDepth < 0 || c.depth(path) < c.o.maxDepth
		if descend && st.NumChildren > 0 && moved {
			c.enqueueLocked(task{path, readKids})
		}
	}
	c.mu.Unlock()
	if changed && !stale {
		c.markPath(path)
	}
	return nil
}

// listPlain lists path's children with no watch (recursive mode) and
// queues a read of each one not cached. It removes none: a deleted child
// has its own event, and after missed events its own re-read (a listing
// read before a child was made can land after that child's read).
func (c *Cache) listPlain(path string) error {
	kids, st, err := c.client.Children(c.ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return c.gone(path)
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.nodes[path]
	if e == nil || c.closed {
		return nil
	}
	if st.Czxid == e.node.Stat.Czxid && st.Mzxid == e.node.Stat.Mzxid && st.Pzxid >= e.node.Stat.Pzxid {
		e.node.Stat = *st // the children's side of the stat, fresh (no event)
	}
	listed := make(map[string]bool, len(kids))
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
	for k := range e.kids { // cached ones a listing misses are re-read (gone: removed)
		if !listed[k] {
			c.enqueueLocked(task{framework.JoinPath(path, k), readData})
		}
	}
	e.kids = listed
	return nil
}

// maxBatch bounds the data reads of one multiRead (framework.GetMany),
// and maxBatches the multiReads in flight at once: one at a time, each
// waits for the server's round trip (a 10,111-node load took 490 ms with
// one, 250 ms with four; CacheLoad).
const (
	maxBatch   = 64
	maxBatches = 4
)

// runBatch reads the data of several paths in one request (recursive
// mode: ZooKeeper's multiRead, each read with its own outcome), on a
// goroutine of its own, and takes each in as readPlain does. A server
// without multiRead makes the cache read one by one from then on.
func (c *Cache) runBatch(ts []task) {
	defer c.wg.Done()
	paths := make([]string, len(ts))
	for i, t := range ts {
		paths[i] = t.path
	}
	res, err := c.client.GetMany(c.ctx, paths)
	if errors.Is(err, curator.ErrUnimplemented) {
		c.mu.Lock()
		c.noMulti = true
		c.mu.Unlock()
		for _, t := range ts {
			c.wg.Add(1)
			c.run(t) // done(t) there
		}
		return
	}
	for i, t := range ts {
		var terr error
		if err != nil {
			terr = err
		} else {
			terr = c.applyPlain(t.path, res[i].Data, res[i].Stat, res[i].Err)
		}
		c.settle(t, terr)
	}
}
