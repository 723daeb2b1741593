package locks

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Decision is what a Predicate says about our contender node.
type Decision struct {
	// Held: we hold the lock (or lease).
	Held bool
	// Watch names the contender (a child of the lock path) to wait on, with
	// a getData watch, when not held. Empty with Held false means: wait for
	// any change among the lock path's children (the semaphore's lease wait).
	Watch string
}

// Predicate decides, from the contenders sorted by sequence (names only)
// and the index of ours among them, whether we hold the lock and, if not,
// what to wait for (Curator's LockInternalsDriver.getsTheLock). It is
// called with ours >= 0.
type Predicate func(contenders []string, ours int) (Decision, error)

// MaxLeases is the standard predicate (Curator's
// StandardLockInternalsDriver): the first maxLeases contenders hold; any
// other waits on the one node maxLeases places before it, so every node is
// watched by at most one waiter and a release wakes exactly one.
// maxLeases < 1 can never work: NewDriver refuses the predicate it returns
// (an error wrapping ErrInvalidArgument), and that predicate, if called,
// returns such an error.
func MaxLeases(maxLeases int) Predicate {
	if maxLeases < 1 {
		return noLeases
	}
	return func(contenders []string, ours int) (Decision, error) {
		if ours < maxLeases {
			return Decision{Held: true}, nil
		}
		return Decision{Watch: contenders[ours-maxLeases]}, nil
	}
}

// errNoLeases is noLeases' error.
var errNoLeases = fmt.Errorf("%w: MaxLeases needs at least 1", ErrInvalidArgument)

// noLeases is what MaxLeases(n < 1) returns; NewDriver recognises it.
func noLeases([]string, int) (Decision, error) { return Decision{}, errNoLeases }

// isNoLeases reports whether pred is noLeases (a func is compared by its code).
func isNoLeases(pred Predicate) bool {
	return reflect.ValueOf(pred).Pointer() == reflect.ValueOf(noLeases).Pointer()
}

// RevokeMessage is the data Revoke writes into a holder's node to ask it to
// release (Curator's LockInternals.REVOKE_MESSAGE).
const RevokeMessage = "__REVOKE__"

// Driver is the one engine behind every lock-like recipe (Curator's
// LockInternals with StandardLockInternalsDriver): each contender creates a
// protected ephemeral-sequential node "<path>/_c_<uuid>-<name><seq>" (parents
// made as containers, so an unused lock path is reaped by the server);
// contenders sort by their sequence suffix only; the Predicate decides who
// holds; a waiter puts a getData watch on the one node the Predicate names.
// A Driver is stateless and safe for concurrent use.
type Driver struct {
	client *framework.Client
	path   string
	name   string
	names  []string
	pred   Predicate
}

// NewDriver returns a driver for contenders named name under path. sortNames
// are every contender name that shares the queue (default: name alone; the
// read-write lock passes both of its names).
func NewDriver(client *framework.Client, path, name string, pred Predicate, sortNames ...string) (*Driver, error) {
	if err := recipe.CheckArgs(client, "lock", path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%w: lock name %q", ErrInvalidArgument, name)
	}
	if pred == nil {
		return nil, fmt.Errorf("%w: nil predicate", ErrInvalidArgument)
	}
	if isNoLeases(pred) {
		return nil, errNoLeases
	}
	if len(sortNames) == 0 {
		sortNames = []string{name}
	}
	return &Driver{client: client, path: path, name: name, names: sortNames, pred: pred}, nil
}

// Path returns the lock path.
func (d *Driver) Path() string { return d.path }

// Client returns the driver's client.
func (d *Driver) Client() *framework.Client { return d.client }

// sequence returns the sort key of a contender name: the text after the
// last occurrence of any of the driver's names (Curator's fixForSorting),
// and whether the name is a contender at all (that text is a sequence).
func (d *Driver) sequence(child string) (string, bool) {
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
	type kv struct{ seq, name string }
	list := make([]kv, 0, len(children))
	for _, ch := range children {
		if seq, ok := d.sequence(ch); ok {
			list = append(list, kv{seq, ch})
		}
	}
	// Ties (a downgraded read node shares its writer's sequence) are broken
	// by name, so the order is total and no stable sort is needed.
	slices.SortFunc(list, func(a, b kv) int {
		if c := strings.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.name
	}
	return out
}

// queueView is the lock's queue as one shared read sees it: the contenders
// sorted, and each one's place.
type queueView struct {
	sorted []string
	index  map[string]int
}

// queue reads the contenders through the client's shared reads, sorting
// each answer once for every waiter of this lock in the process.
func (d *Driver) queue(ctx context.Context) (*queueView, error) {
	sc, err := d.client.ChildrenShared(ctx, d.path)
	if errors.Is(err, zk.ErrNoNode) {
		return &queueView{}, nil
	}
	if err != nil {
		return nil, err
	}
	key := "locks.queue\x00" + strings.Join(d.names, "\x00")
	return sc.View(key, func(names []string) any { return d.view(names) }).(*queueView), nil
}

// queueW reads the contenders with a child watch set by the same read.
func (d *Driver) queueW(ctx context.Context) (*queueView, *framework.Watch, error) {
	names, _, w, err := d.client.ChildrenW(ctx, d.path)
	if errors.Is(err, zk.ErrNoNode) {
		return &queueView{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return d.view(names), w, nil
}

func (d *Driver) view(names []string) *queueView {
	q := &queueView{sorted: d.Sort(names), index: map[string]int{}}
	for i, n := range q.sorted {
		q.index[n] = i
	}
	return q
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

// Contender is one node of ours in a lock's queue.
type Contender struct {
	d       *Driver
	node    string // full path
	name    string
	session *framework.Session
}

// Node returns the contender's node path.
func (c *Contender) Node() string { return c.node }

// Name returns the contender's node name.
func (c *Contender) Name() string { return c.name }

// Session returns the session the contender's node belongs to; the node
// (and so the lock) is gone once Session().Done() is closed.
func (c *Contender) Session() *framework.Session { return c.session }

// Enqueue creates our contender node: protected, ephemeral-sequential, with
// container parents. data nil means the client's default data.
func (d *Driver) Enqueue(ctx context.Context, data []byte) (*Contender, error) {
	return d.enqueue(ctx, d.name, framework.ModeEphemeralSequential, data)
}

// EnqueueAs creates a protected ephemeral node with the exact name given (no
// sequence appended); the read-write lock's downgrade uses it to give a read
// node its writer's sequence (CURATOR-621).
func (d *Driver) EnqueueAs(ctx context.Context, name string, data []byte) (*Contender, error) {
	if _, ok := d.sequence(name); !ok {
		return nil, fmt.Errorf("%w: %q is not a contender name", ErrInvalidArgument, name)
	}
	return d.enqueue(ctx, name, framework.ModeEphemeral, data)
}

func (d *Driver) enqueue(ctx context.Context, name string, mode framework.CreateMode, data []byte) (*Contender, error) {
	if data == nil {
		data = d.client.DefaultData()
	}
	n, err := d.client.CreateNode(ctx, framework.JoinPath(d.path, name), data,
		framework.WithMode(mode), framework.WithProtection(), framework.WithParentContainers())
	if err != nil {
		return nil, err
	}
	return &Contender{d: d, node: n.Path, name: framework.NodeName(n.Path), session: n.Session}, nil
}

// WaitOptions tune Contender.Wait.
type WaitOptions struct {
	// Try: do not wait; report ErrLocked if not held at once.
	Try bool
	// Wake, if not nil, is called before each read of the queue (so before
	// the Predicate reads what Wake tells of); the waiter looks again when
	// the channel it returns is closed or receives (e.g. a semaphore whose
	// maximum changed). Return a fresh channel after each change.
	Wake func() <-chan struct{}
	// OnEnqueue, if not nil, is called by Acquire with the node's path as
	// soon as it is made, before the wait.
	OnEnqueue func(node string)
}

// testHookWaiting, set only by tests, runs when Wait has decided to wait,
// just before it waits: a test changes the queue there, where a change must
// still wake the waiter.
var testHookWaiting func(c *Contender)

// Wait blocks until the Predicate says the contender holds, ctx is done,
// or the contender cannot ever hold: its node vanished (ErrNodeVanished,
// wrapping framework.ErrSessionLost when its session was lost, CURATOR-527,
// or framework.ErrClosed when the client closed: Session.Err). Wait does
// not delete the node on failure; Acquire does.
//
// No change can slip between a decision to wait and the wait: a wait on one
// node sets its watch after the decision, and a node gone meanwhile makes it
// look again; a wait on any change (Decision{}) decides on the very read
// that set its watch (as Curator's semaphore does), and takes the Wake
// channel before that read, so a change after it fires the one or the other.
func (c *Contender) Wait(ctx context.Context, o WaitOptions) error {
	d := c.d
	watchAll := false // the last decision was Decision{}: decide on watched reads
	for {
		if c.session.Lost() {
			return fmt.Errorf("%w: %s: %w", ErrNodeVanished, c.node, c.session.Err())
		}
		var wake <-chan struct{}
		if o.Wake != nil {
			wake = o.Wake() // before the read and the decision: a change after them closes it
		}
		var (
			q   *queueView
			w   *framework.Watch
			err error
		)
		if watchAll {
			q, w, err = d.queueW(ctx)
		} else {
			// Shared: a thousand waiters of one process make one read (never
			// one older than their own call) and sort it once.
			q, err = d.queue(ctx)
		}
		if err != nil {
			return err
		}
		dec, err := c.decide(q)
		if err != nil || dec.Held || o.Try {
			if w != nil {
				w.Stop()
			}
			if err == nil && !dec.Held {
				err = ErrLocked
			}
			return err
		}
		if dec.Watch != "" {
			watchAll = false
			if w != nil {
				w.Stop()
			}
			if testHookWaiting != nil {
				testHookWaiting(c)
			}
			_, _, w, err = d.client.GetW(ctx, framework.JoinPath(d.path, dec.Watch))
			if errors.Is(err, zk.ErrNoNode) {
				continue // it went meanwhile: look again
			}
			if err != nil {
				return err
			}
		} else if !watchAll || w == nil {
			watchAll = true // decide again, on a watched read
			continue
		} else if testHookWaiting != nil {
			testHookWaiting(c)
		}
		select {
		case <-w.C():
		case <-wake:
		case <-c.session.Done():
		case <-ctx.Done():
			w.Stop()
			return ctx.Err()
		}
		w.Stop()
	}
}

// decide applies the Predicate to our place in q.
func (c *Contender) decide(q *queueView) (Decision, error) {
	ours, ok := q.index[c.name]
	if !ok {
		if c.session.Lost() {
			return Decision{}, fmt.Errorf("%w: %s: %w", ErrNodeVanished, c.node, c.session.Err())
		}
		return Decision{}, fmt.Errorf("%w: %s", ErrNodeVanished, c.node)
	}
	return c.d.pred(q.sorted, ours)
}

// Delete deletes the contender's node: guaranteed (retried in the background
// if the connection is down) and only ever our own node. A node already gone
// is not an error. A *framework.DeletePendingError says the delete goes on
// in the background.
func (c *Contender) Delete(ctx context.Context) error {
	return c.d.client.Delete(ctx, c.node, framework.Guaranteed(), framework.IgnoreMissing())
}

// deleteQuietly deletes the node after a failed acquire, with a context of
// its own (the caller's may be done): the node must not stay behind.
func (c *Contender) deleteQuietly(ctx context.Context) {
	ctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	if err := c.Delete(ctx); err != nil && !errors.Is(err, framework.ErrDeletePending) {
		c.d.client.Logger().Warn("deleting contender node after failed acquire", "node", c.node, "err", err)
	}
}

// Acquire enqueues a contender and waits until it holds. On any failure
// (ctx done, Try and not held, session lost, error) the contender's node is
// deleted (guaranteed) before Acquire returns the error, so an abandoned
// attempt leaves nothing behind.
func (d *Driver) Acquire(ctx context.Context, data []byte, o WaitOptions) (*Contender, error) {
	c, err := d.Enqueue(ctx, data)
	if err != nil {
		return nil, err
	}
	if o.OnEnqueue != nil {
		o.OnEnqueue(c.node)
	}
	if err := c.Wait(ctx, o); err != nil {
		c.deleteQuietly(ctx)
		return nil, err
	}
	return c, nil
}

// WatchRevocation waits, while the contender holds, for a revocation request
// (Revoke writes RevokeMessage into our node) and calls fn once if one comes.
// It returns when stop is closed, the node is gone or the session lost.
func (c *Contender) WatchRevocation(stop <-chan struct{}, fn func()) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
		case <-c.session.Done():
		}
		cancel()
	}()
	for {
		data, _, w, err := c.d.client.GetW(ctx, c.node)
		if err != nil {
			return
		}
		if string(data) == RevokeMessage {
			w.Stop()
			fn()
			return
		}
		select {
		case ev := <-w.C():
			if ev.Type != framework.EventNodeDataChanged {
				return
			}
		case <-ctx.Done():
			w.Stop()
			return
		}
	}
}

// Revoke asks the holder of a lock node to release it (Curator's
// Revoker.attemptRevoke): it writes RevokeMessage into the node. Holders
// that armed revocation release; others ignore it. A node already gone is
// not an error.
func Revoke(ctx context.Context, client *framework.Client, node string) error {
	if client == nil {
		return fmt.Errorf("%w: nil client", ErrInvalidArgument)
	}
	_, err := client.Set(ctx, node, []byte(RevokeMessage), -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
