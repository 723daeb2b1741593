package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Driver is the engine of one lock-like recipe on one path: it makes our
// contender nodes, orders the queue and waits per its Predicate. It is
// stateless and safe for concurrent use.
type Driver struct {
	client  *framework.Client
	path    string
	name    string
	names   []string
	key     string // names, joined: the key of this driver's view of a shared read
	pred    Predicate
	handoff bool // a waiter may hold when its predecessor goes without reading again (handoff.go)
	// busy: the last first reading of the queue would not have held by
	// itself (others were there); the next create asks for no parent stat
	// (it would be wasted), until a reading shows it would again.
	busy atomic.Bool
	// watchesAll: its waits decide on watched reads (WaitOptions.WatchAll;
	// SetWatchesAll).
	watchesAll bool
	handoffs   *handoffs // what its process knows of its path (handoff.go): process, but in tests
}

// New returns a driver for contenders named name under path. sortNames are
// every contender name that shares the queue (default: name alone; the
// read-write lock passes both of its names). Errors wrap
// curator.ErrInvalidArgument.
func New(client *framework.Client, path, name string, pred Predicate, sortNames ...string) (*Driver, error) {
	if err := recipe.CheckArgs(client, "lock", path); err != nil {
		return nil, err
	}
	if name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("driver: %w: lock name %q", curator.ErrInvalidArgument, name)
	}
	if pred == nil {
		return nil, fmt.Errorf("driver: %w: nil predicate", curator.ErrInvalidArgument)
	}
	if isNoLeases(pred) {
		return nil, errNoLeases
	}
	if len(sortNames) == 0 {
		sortNames = []string{name}
	}
	d := &Driver{client: client, path: path, name: name, names: sortNames, key: strings.Join(sortNames, "\x00"),
		pred: pred, handoff: handoffSafe(pred, sortNames) && !off.handoff, handoffs: process}
	return d, nil
}

// SetWatchesAll tells the driver that its waits decide on watched reads
// (WaitOptions.WatchAll: the semaphore's lease wait), before its first
// create: a create then asks for the parent's stat, which the count rule
// decides on, not for a listing, which such a wait reads again with a
// watch. Call it before the driver is used.
func (d *Driver) SetWatchesAll() { d.watchesAll = true }

// Path returns the lock path.
func (d *Driver) Path() string { return d.path }

// Client returns the driver's client.
func (d *Driver) Client() *framework.Client { return d.client }

// Name returns the name our contender nodes are made with.
func (d *Driver) Name() string { return d.name }

// Sequence returns the sort key of a contender name: the text after the
// last occurrence of any of the driver's names (Curator's fixForSorting),
// and whether the name is a contender at all (that text is a sequence).
func (d *Driver) Sequence(child string) (string, bool) {
	best := -1
	for _, n := range d.names {
		if i := strings.LastIndex(child, n); i >= 0 && i+len(n) > best {
			best = i + len(n)
		}
	}
	if best < 0 || best == len(child) {
		return "", false
	}
	seq := child[best:]
	for i, r := range seq {
		if (r < '0' || r > '9') && !(i == 0 && r == '-' && len(seq) > 1) {
			return "", false
		}
	}
	return seq, true
}

// Sort returns the contenders among children, sorted by sequence; other
// children (not contenders of this lock, or oddly named) are left out.
func (d *Driver) Sort(children []string) []string {
	q := d.queueOf(children, 0)
	out := make([]string, q.Len())
	for i := range out {
		out[i] = q.Name(i)
	}
	return out
}

// Contenders returns the sorted contender names under the lock path (none
// if the path does not exist).
func (d *Driver) Contenders(ctx context.Context) ([]string, error) {
	children, _, err := d.client.Children(ctx, d.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return d.Sort(children), nil
}

// Participants returns the full paths of the contenders, in queue order
// (Curator's getParticipantNodes).
func (d *Driver) Participants(ctx context.Context) ([]string, error) {
	names, err := d.Contenders(ctx)
	if err != nil {
		return nil, err
	}
	for i, n := range names {
		names[i] = framework.JoinPath(d.path, n)
	}
	return names, nil
}

// Enqueue creates our contender node: protected, ephemeral-sequential, with
// container parents. data nil means the client's default data.
func (d *Driver) Enqueue(ctx context.Context, data []byte) (*Contender, error) {
	return d.enqueue(ctx, d.name, framework.ModeEphemeralSequential, data)
}

// EnqueueAs creates a protected ephemeral node with the exact name given (no
// sequence appended); the read-write lock's downgrade uses it to give a read
// node its writer's sequence (CURATOR-621).
func (d *Driver) EnqueueAs(ctx context.Context, name string, data []byte) (*Contender, error) {
	if _, ok := d.Sequence(name); !ok {
		return nil, fmt.Errorf("driver: %w: %q is not a contender name", curator.ErrInvalidArgument, name)
	}
	if d.handoff { // a chosen sequence would break the handoff's proof
		return nil, fmt.Errorf("driver: %w: EnqueueAs on a driver whose waiters hand off", curator.ErrInvalidArgument)
	}
	return d.enqueue(ctx, name, framework.ModeEphemeral, data)
}

func (d *Driver) enqueue(ctx context.Context, name string, mode framework.CreateMode, data []byte) (*Contender, error) {
	opts, h := d.createOptions(mode)
	n, err := d.client.CreateNode(ctx, framework.JoinPath(d.path, name), d.nodeData(data), opts...)
	return d.enqueued(&n, err, h) // a pointer: n's copy would be in enqueue's frame too
}

// nodeData is a contender's data: data, or the client's default for nil.
//
//go:noinline
func (d *Driver) nodeData(data []byte) []byte {
	if data == nil {
		return d.client.DefaultData()
	}
	return data
}

// createOptions decides how a contender's create reads its parent, if at
// all: its options, and its registration as a create in flight, which
// enqueued ends once it returns. (Apart from enqueue, whose frame is on
// every waiter's stack while its create is in flight.)
//
//go:noinline
func (d *Driver) createOptions(mode framework.CreateMode) (opts []framework.OpOption, h *handoff) {
	h, crowded, sibling := d.handoffs.create(d.client, d.path)
	parent := parentNone
	switch {
	case !mode.Sequential():
		// A node in a place of its own (EnqueueAs, the only non-sequential
		// contender: the downgrade's read node) holds without a decision:
		// nothing would use the read.
	case !d.watchesAll && !sibling:
		// The queue itself, in the same round trip: the first decision
		// needs no read of its own (2 round trips for an acquisition, not
		// 3). Not for one that decides on watched reads (the semaphore's
		// lease wait), which the count alone decides when it holds at
		// once; nor while another create of the same client is in flight
		// there: a reading of the queue is shared then (a thousand
		// waiters queued at once would each make one, of a thousand
		// names). Creates of other clients do not count: no read is
		// shared between clients, so each would make its own reading
		// anyway, a round trip later.
		parent = parentList
	case crowded:
		// Not when another contender of the client is there (creating,
		// or waiting to hand off): then ours is unlikely to be alone.
	case !d.busy.Load():
		// The parent's stat, in the same round trip: a node that is its
		// path's only child decides without reading the queue (Wait).
		parent = parentStat
	}
	if off.parent {
		parent = parentNone
	}
	if testHookCreating != nil {
		testHookCreating(d)
	}
	return contenderOpts[mode][parent], h
}

// The parent read behind a contender's create.
const (
	parentNone = iota
	parentStat // WithParentStat
	parentList // WithParentChildren
)

// contenderOpts are a contender's create options, by mode (ephemeral or
// ephemeral-sequential) and parent read, made once: they would be on the
// stack of every waiter's create, its deepest call.
var contenderOpts = func() map[framework.CreateMode][3][]framework.OpOption {
	t := map[framework.CreateMode][3][]framework.OpOption{}
	for _, mode := range []framework.CreateMode{framework.ModeEphemeral, framework.ModeEphemeralSequential} {
		var byParent [3][]framework.OpOption
		for parent, extra := range []framework.OpOption{nil, framework.WithParentStat(), framework.WithParentChildren()} {
			o := []framework.OpOption{framework.WithMode(mode), framework.WithProtection(), framework.WithParentContainers()}
			if extra != nil {
				o = append(o, extra)
			}
			byParent[parent] = o[:len(o):len(o)] // full: an append by CreateNode copies
		}
		t[mode] = byParent
	}
	return t
}()

// enqueued is enqueue's end, apart to keep enqueue's frame (on the stack
// while the create is in flight) small: the create in flight no more, and
// the Contender for n with what its create read of the queue.
//
//go:noinline
func (d *Driver) enqueued(n *framework.Created, err error, h *handoff) (*Contender, error) {
	ours := ""
	if err == nil && d.handoff {
		ours = framework.NodeName(n.Path)
	}
	d.handoffs.created(h, ours)
	if err != nil {
		return nil, err
	}
	c := &Contender{d: d, node: n.Path, name: framework.NodeName(n.Path), session: n.Session}
	c.seq, _ = d.Sequence(c.name)
	if n.Parent != nil {
		c.czxid = n.Parent.Czxid
		if n.Zxid != 0 && n.Parent.Pzxid == n.Zxid {
			// The parent read behind our create: nothing under the path
			// changed between them (no child made or deleted: the server
			// sets pzxid at each), so NumChildren is our node and those
			// before it, exactly. Else (our node deleted and another made
			// meanwhile: an operator, a foreign contender) the count
			// decides nothing and the queue is read. Relies on: the
			// server answering a session's requests in order, the read
			// sent right behind the create on its connection
			// (framework.WithParentStat). Attacked by:
			// TestCreatedZxidAgainstTheParentsPzxid (framework),
			// TestParentStatDecidesOnlyUnchanged, TestAdversarialMutex.
			c.siblings = int(n.Parent.NumChildren)
		}
		if n.Children != nil {
			// The queue listed behind our create, on its connection: a
			// reading like any other, made after our create (the server
			// answers a session's requests in order), with the lock
			// path's czxid from the same reply (handoff.go, 3.). Relies
			// on: that order (framework.WithParentChildren); a listing
			// sent in a new session after ours was lost may miss our
			// node, which then decides as vanished. Attacked by:
			// TestMutexCreateListsTheQueue, TestLockPathRemadeBetweenReadings,
			// TestLockPathRemadeRightBeforeTheCreate, TestListedCreateDecides,
			// TestAdversarialMutex (the path reaped between rounds).
			c.listed = d.queueOf(n.Children, c.czxid)
		}
	}
	return c, nil
}

// testHookCreating, set only by tests, runs just before a contender's
// create by d: a test changes the path there, after the create's options
// are chosen.
var testHookCreating func(d *Driver)

// SetCreateHook sets the hook run just before each contender's create
// (tests only); the returned func restores the previous one. Set it only
// while no create runs.
func SetCreateHook(f func(d *Driver)) (restore func()) {
	old := testHookCreating
	testHookCreating = f
	return func() { testHookCreating = old }
}

// Acquire enqueues a contender and waits until it holds. On any failure
// (ctx done, Try and not held, session lost, error) the contender's node is
// deleted (guaranteed) before Acquire returns the error, so an abandoned
// attempt leaves nothing behind.
func (d *Driver) Acquire(ctx context.Context, data []byte, o *WaitOptions) (*Contender, error) {
	c, err := d.Enqueue(ctx, data)
	if err != nil {
		return nil, err
	}
	if o.OnEnqueue != nil {
		o.OnEnqueue(c.node)
	}
	if err := c.Wait(ctx, o); err != nil {
		c.DeleteQuietly(ctx)
		return nil, err
	}
	return c, nil
}
