package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// ErrTTLUnsupported is the error of a TTL node's create refused by a
// server that runs without zookeeper.extendedTypesEnabled=true (its
// answer is UNIMPLEMENTED, code -6): set that Java system property on
// every server (-Dzookeeper.extendedTypesEnabled=true, ZooKeeper 3.5.3 and
// later). It wraps errors.ErrUnsupported.
var ErrTTLUnsupported = fmt.Errorf("%w: the server refuses TTL nodes: it needs the Java system property zookeeper.extendedTypesEnabled=true", errors.ErrUnsupported)

// PersistentNode is Curator's PersistentNode: a node that stays while its
// owner lives. Once started, it is made, and made again whenever it goes:
// deleted by someone else, or gone with a lost session (an ephemeral
// node), always with its latest data. Close deletes it.
//
// Never two nodes for one PersistentNode: every sequential mode is made
// protected (a create whose reply was lost is found again, never made
// twice; Curator lets an unprotected sequential node double), and once
// made, the node is made again under its exact name (sequence and
// protection included, as Curator since CURATOR-483), so that a node of
// an earlier session still there is found, not doubled: it is ours, and
// deleted before ours is made again in the current session. A node found
// at that name and owned by a session that was never ours (another
// process using the same path: two members of a group with one id) is
// waited on, never adopted, and reported by Err; Curator adopts it, and
// the two flap.
//
// Differences from Curator, on purpose: SetData before the first create
// is kept and used by it (Curator throws); a change of the node's data by
// someone else is left as it is, as in Curator. All methods are safe for
// concurrent use.
type PersistentNode struct {
	client *framework.Client
	base   string
	mode   framework.CreateMode
	o      options

	mu      sync.Mutex
	data    []byte
	gen     uint64 // generation of data: SetData increments it
	written uint64 // the generation the node holds (as far as we wrote it)
	path    string // the node's actual path, "" until made
	ours    map[int64]bool
	owned   bool  // the node at path is ours, as last seen (made, or read ours)
	owner   int64 // ephemeral modes: the session that owns it
	err     error // the latest problem, nil once the node is there
	started bool
	closed  bool
	poke    chan struct{} // tells the loop of new data
	wrote   chan struct{} // closed and replaced each time written moves
	made    chan struct{} // closed once the node was first made
	errc    chan struct{} // closed and replaced each time a problem is seen (err set)
	stop    context.CancelFunc
	done    chan struct{} // closed when the loop ends

	listeners recipe.Listeners[string] // AddListener's
}

// NewPersistentNode returns a PersistentNode for path, not started: a
// node with data (copied; nil: empty) in mode (WithMode, default
// ephemeral), its parents made as containers. Errors wrap
// curator.ErrInvalidArgument.
func NewPersistentNode(client *framework.Client, path string, data []byte, opts ...Option) (*PersistentNode, error) {
	if err := recipe.CheckArgs(client, "node", path); err != nil {
		return nil, err
	}
	o := options{mode: framework.ModeEphemeral, parents: true}
	if err := o.apply("PersistentNode", persistentOpts, opts); err != nil {
		return nil, err
	}
	ttlMode := o.mode == framework.ModePersistentTTL || o.mode == framework.ModePersistentSequentialTTL
	if ttlMode != (o.ttl > 0) {
		return nil, fmt.Errorf("%w: a TTL (%v) goes with, and only with, a TTL mode", curator.ErrInvalidArgument, o.ttl)
	}
	if o.mode.Sequential() {
		o.protected = true // never two nodes (see PersistentNode)
	}
	return &PersistentNode{client: client, base: path, mode: o.mode, o: o,
		data: append([]byte{}, data...), gen: 1, ours: map[int64]bool{},
		poke: make(chan struct{}, 1), wrote: make(chan struct{}), made: make(chan struct{}), errc: make(chan struct{})}, nil
}

// Start starts keeping the node (Curator's start): it returns at once;
// WaitForInitialCreate waits for the node. Starting twice is curator.ErrBusy,
// after Close curator.ErrClosed.
func (n *PersistentNode) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.closed:
		return fmt.Errorf("persistent node %s: %w", n.base, curator.ErrClosed)
	case n.started:
		return fmt.Errorf("persistent node %s: %w: already started", n.base, curator.ErrBusy)
	}
	n.started = true
	ctx, stop := context.WithCancel(context.Background())
	n.stop, n.done = stop, make(chan struct{})
	go n.loop(ctx)
	return nil
}

// WaitForInitialCreate waits until the node has been made (or found ours)
// once, or ctx ends (its error, wrapping the latest problem, Err, if any:
// curator.ErrLocked for a node of another session in its place).
// A server that refuses TTL nodes ends the wait at once with an error
// wrapping ErrTTLUnsupported (the node goes on trying, every few seconds,
// until Close: a server restarted with the setting gets it). Not started:
// curator.ErrNotHeld; closed before the node was made: curator.ErrClosed.
func (n *PersistentNode) WaitForInitialCreate(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	return n.waitMade(ctx, func(err error) bool { return errors.Is(err, ErrTTLUnsupported) })
}

// waitMade waits until the node has been made once, or ctx ends, or the
// node reports a problem for which stop is true (then that problem).
func (n *PersistentNode) waitMade(ctx context.Context, stop func(error) bool) error {
	n.mu.Lock()
	started, done := n.started, n.done
	n.mu.Unlock()
	if !started {
		return fmt.Errorf("persistent node %s: %w: not started", n.base, curator.ErrNotHeld)
	}
	for {
		select {
		case <-n.made:
			return nil
		default:
		}
		n.mu.Lock()
		err, errc := n.err, n.errc
		n.mu.Unlock()
		if err != nil && stop(err) {
			return err
		}
		select {
		case <-n.made:
			return nil
		case <-errc:
		case <-done:
			select {
			case <-n.made:
				return nil
			default:
			}
			return fmt.Errorf("persistent node %s: %w", n.base, curator.ErrClosed)
		case <-ctx.Done():
			if err := n.Err(); err != nil {
				return fmt.Errorf("persistent node %s: %w (%w)", n.base, ctx.Err(), err)
			}
			return fmt.Errorf("persistent node %s: %w", n.base, ctx.Err())
		}
	}
}

// Path returns the node's actual path (Curator's getActualPath: with its
// sequence number and protection), "" until it was first made.
func (n *PersistentNode) Path() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.path
}

// Data returns a copy of the node's data as last set here (not read from
// ZooKeeper).
func (n *PersistentNode) Data() []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]byte{}, n.data...)
}

// Err returns the latest problem keeping the node (a refused create, a
// node of another session in its place), nil while the node is there.
func (n *PersistentNode) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// SetData sets the node's data (copied): it is written to the node now if
// the node is there, and used by every create from now on (Curator
// CURATOR-241: a node made again gets the latest data). It returns once
// the node holds it, or ctx ends (the data is still written later);
// before Start it only keeps data. After Close: curator.ErrClosed.
func (n *PersistentNode) SetData(ctx context.Context, data []byte) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("persistent node %s: %w", n.base, curator.ErrClosed)
	}
	n.data = append([]byte{}, data...)
	n.gen++
	gen, started, done := n.gen, n.started, n.done
	n.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case n.poke <- struct{}{}:
	default:
	}
	for {
		n.mu.Lock()
		written, wrote := n.written, n.wrote
		n.mu.Unlock()
		if written >= gen {
			return nil
		}
		select {
		case <-wrote:
		case <-done:
			return fmt.Errorf("persistent node %s: %w", n.base, curator.ErrClosed)
		case <-ctx.Done():
			return fmt.Errorf("persistent node %s: set data: %w", n.base, ctx.Err())
		}
	}
}

// Close stops keeping the node and deletes it (guaranteed: a delete that
// cannot finish now goes on in the background), unless WithKeepOnClose.
// A create in flight is let finish first, so that a node made just as
// Close runs is deleted too (CURATOR-297). Only the node's exact path is
// ever deleted (CURATOR-506), and only if it is ours as last seen: never
// another owner's node the PersistentNode was waiting on, nor, in an
// ephemeral mode, the node of a session that is no longer the client's
// (it goes with that session; another may hold the path by now).
// Closing twice is a no-op.
func (n *PersistentNode) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	stop, done := n.stop, n.done
	n.mu.Unlock()
	if stop == nil {
		return nil // never started
	}
	stop()
	<-done
	n.mu.Lock()
	path, owned, owner := n.path, n.owned, n.owner
	n.mu.Unlock()
	if path == "" || !owned || n.o.keep {
		return nil
	}
	if n.mode.Ephemeral() {
		if s := n.client.Session(); s == nil || s.ID() != owner || s.Lost() {
			return nil
		}
	}
	ctx, cancel := recipe.CleanupContext(context.Background())
	defer cancel()
	if err := recipe.DeleteOwn(ctx, n.client, path); err != nil && !errors.Is(err, curator.ErrClosed) {
		return fmt.Errorf("persistent node %s: delete: %w", path, err)
	}
	return nil
}

// retryPause bounds the pause between two tries after an error (the
// framework's retry loop has given up on that call: a long disconnection,
// a refused create).
const (
	minPause = 50 * time.Millisecond
	maxPause = 5 * time.Second
)

// loop keeps the node until ctx ends: make it (or find it), watch it,
// write new data, and start again when it goes.
func (n *PersistentNode) loop(ctx context.Context) {
	defer close(n.done)
	pause := minPause
	for ctx.Err() == nil {
		w, err := n.keep(ctx)
		if err == nil && w == nil {
			continue // made again, or waited for: look again
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.setErr(err)
			if !sleep(ctx, pause) {
				return
			}
			pause = min(2*pause, maxPause)
			continue
		}
		pause = minPause
		n.setErr(nil)
		select {
		case <-ctx.Done():
			w.Stop()
			return
		case <-w.C():
			// Deleted, changed (by someone else, or our own write), or
			// the watch ended with the session: look again.
		case <-n.poke:
			w.Stop()
		}
	}
}

// keep makes sure the node is there and ours with our latest data, and
// returns a watch on it. The decision is on the watched read itself: a
// node that goes after the read fires the watch.
func (n *PersistentNode) keep(ctx context.Context) (*framework.Watch, error) {
	n.mu.Lock()
	path := n.path
	n.mu.Unlock()
	if path == "" {
		if err := n.create(ctx, n.base, n.mode, n.o.protected); err != nil {
			return nil, err
		}
		n.mu.Lock()
		path = n.path
		n.mu.Unlock()
	}
	_, st, w, err := n.client.GetW(ctx, path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		// Gone: made again under its exact name (no new sequence, the same
		// protection), so that a node of ours still there is found.
		n.setOwned(false, 0)
		return nil, n.create(ctx, path, nonSequential(n.mode), false)
	case err != nil:
		return nil, err
	}
	if n.mode.Ephemeral() {
		sess := n.client.Session()
		if sess == nil || st.EphemeralOwner != sess.ID() {
			w.Stop()
			return nil, n.foreign(ctx, path, st)
		}
		n.mu.Lock()
		n.ours[sess.ID()] = true // found ours: a create whose reply was lost
		n.mu.Unlock()
		n.setOwned(true, sess.ID())
	} else {
		n.setOwned(true, 0) // a persistent node at our path is adopted, as Curator
	}
	if err := n.writeData(ctx, path); err != nil {
		w.Stop()
		return nil, err
	}
	return w, nil
}

// create makes the node at path in mode (protected: with a new protected
// name). A node already there under its exact name is checked by the next
// watched read (keep).
func (n *PersistentNode) create(ctx context.Context, path string, mode framework.CreateMode, protected bool) error {
	n.mu.Lock()
	data, gen := n.data, n.gen
	n.mu.Unlock()
	opts := []framework.OpOption{framework.WithMode(mode)}
	if protected {
		opts = append(opts, framework.WithProtection())
	}
	if n.o.parents {
		opts = append(opts, framework.WithParentContainers())
	}
	if n.o.ttl > 0 {
		opts = append(opts, framework.WithTTL(n.o.ttl))
	}
	// Not ended by Close: a create Close interrupted might still be made
	// by the server, after Close looked for it (CURATOR-297). Close waits
	// for it instead (up to recipe.CleanupTimeout; a protected create
	// given up is then found and deleted by the framework), and deletes
	// what it made.
	cctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	made, err := n.client.CreateNode(cctx, path, data, opts...)
	switch {
	case errors.Is(err, zk.ErrNodeExists):
		// There (a node at an exact name: ours, whose create's reply was
		// lost, or another's): keep's watched read decides whose it is.
		n.mu.Lock()
		if n.path == "" {
			n.path = path // not sequential: sequential modes are protected, never here
		}
		n.mu.Unlock()
		return nil
	case err != nil:
		if strings.Contains(err.Error(), "unknown error: -6") { // UNIMPLEMENTED: go-zookeeper has no sentinel for it
			return fmt.Errorf("persistent node %s: %w (%w)", path, ErrTTLUnsupported, err)
		}
		return fmt.Errorf("persistent node %s: create: %w", path, err)
	}
	n.mu.Lock()
	n.path = made.Path
	became := !n.owned
	n.owned, n.owner, n.err = true, 0, nil // there, ours: no problem left
	if made.Session != nil {
		n.ours[made.Session.ID()] = true
		n.owner = made.Session.ID()
	}
	if gen > n.written {
		n.written = gen
		close(n.wrote)
		n.wrote = make(chan struct{})
	}
	n.mu.Unlock()
	n.recreated() // metrics.go: if it was made (or found ours) before
	n.madeOnce()
	if became {
		n.tell(made.Path)
	}
	return nil
}

// foreign deals with an ephemeral node at our path that the current
// session does not own: one of an earlier session of ours (the client
// declared it lost before the server expired it) is deleted, at its
// version, so that ours is made again; another's is waited on (it is not
// ours to delete) and reported.
//
// A decision on local knowledge: "ours" is the set of sessions that made
// (or were found owning) our node. Relies on: a session id naming one
// session for the ensemble's life (the server never reuses one), and the
// delete being at the version read, so a node made again meanwhile (by
// anyone) is never deleted. Attacked by:
// TestPersistentNodeReplacesItsOldSessionsNode (our old session's node
// still there), TestPersistentNodeWaitsForAnotherOwner (another's node:
// never deleted, never adopted).
func (n *PersistentNode) foreign(ctx context.Context, path string, st *zk.Stat) error {
	n.mu.Lock()
	ours := n.ours[st.EphemeralOwner]
	n.mu.Unlock()
	if ours {
		err := n.client.Delete(ctx, path, framework.WithVersion(st.Version))
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			return err
		}
		return n.create(ctx, path, nonSequential(n.mode), false)
	}
	n.setOwned(false, 0)
	// A data watch, not exists: a node gone before it leaves no watch.
	_, _, w, err := n.client.GetW(ctx, path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil // gone already: make ours
	case err != nil:
		return err
	}
	n.setErr(fmt.Errorf("persistent node %s: %w: held by session 0x%x, not ours", path, curator.ErrLocked, st.EphemeralOwner))
	select {
	case <-w.C():
	case <-ctx.Done():
		w.Stop()
		return ctx.Err()
	}
	return nil
}

// writeData writes our latest data to the node if it may not hold it.
func (n *PersistentNode) writeData(ctx context.Context, path string) error {
	n.mu.Lock()
	data, gen := n.data, n.gen
	need := gen > n.written
	n.mu.Unlock()
	if !need {
		n.madeOnce()
		return nil
	}
	if _, err := n.client.Set(ctx, path, data); err != nil {
		return err
	}
	n.mu.Lock()
	if gen > n.written {
		n.written = gen
		close(n.wrote)
		n.wrote = make(chan struct{})
	}
	n.mu.Unlock()
	n.madeOnce()
	return nil
}

func (n *PersistentNode) madeOnce() {
	select {
	case <-n.made:
	default:
		close(n.made)
	}
}

// setOwned records whether the node at n.path is ours; found ours where it
// was not (a create whose reply was lost, made all the same) it is made,
// as far as listeners are told.
func (n *PersistentNode) setOwned(owned bool, owner int64) {
	n.mu.Lock()
	became := owned && !n.owned
	n.owned, n.owner = owned, owner
	path := n.path
	n.mu.Unlock()
	if became {
		n.tell(path)
	}
}

// AddListener adds fn, called with the node's path each time the node is
// made: its first create and every create after it went (deleted by
// someone else, gone with a lost session), including one whose reply was
// lost and that was found ours (Curator's PersistentNodeListener.nodeCreated).
// fn runs on the goroutine that keeps the node, in order: while it runs
// the node is not watched, so it should return soon, and must not call
// Close. remove removes it (a call under way may still finish after it
// returns); after Close returns there is no call.
func (n *PersistentNode) AddListener(fn func(path string)) (remove func()) {
	return n.listeners.Add(fn)
}

// tell calls the listeners with path, in the order they were added.
func (n *PersistentNode) tell(path string) {
	for _, fn := range n.listeners.Snapshot() {
		fn(path)
	}
}

func (n *PersistentNode) setErr(err error) {
	n.mu.Lock()
	n.err = err
	if err != nil {
		close(n.errc)
		n.errc = make(chan struct{})
	}
	n.mu.Unlock()
}

// nonSequential is mode without its sequence (Curator's re-create).
func nonSequential(m framework.CreateMode) framework.CreateMode {
	switch m {
	case framework.ModeEphemeralSequential:
		return framework.ModeEphemeral
	case framework.ModePersistentSequential:
		return framework.ModePersistent
	case framework.ModePersistentSequentialTTL:
		return framework.ModePersistentTTL
	}
	return m
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
