package barrier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/recipe"
)

// DoubleBarrier is one member of a double barrier, the Go counterpart of
// Curator's DistributedDoubleBarrier (the ZooKeeper recipe): members Enter
// and block until memberQty of them are in, do their work, then Leave and
// block until every member has left. memberQty is a threshold, not a
// limit: more members may enter.
//
// A DoubleBarrier is one member at a time: Enter, then Leave, then Enter
// again if you like (each Enter makes a new member node). Its methods are
// safe to call from several goroutines, but a second Enter while one is
// under way or done fails with curator.ErrBusy, and Leave without a
// successful Enter fails with curator.ErrNotHeld. Make one DoubleBarrier per
// member; several may share a client.
type DoubleBarrier struct {
	client    *framework.Client
	path      string
	readyPath string
	qty       int

	hooks *hooks // nil except in tests

	mu    sync.Mutex
	state memberState
	m     *member // while entered
}

type memberState int

const (
	idle memberState = iota
	entering
	entered
	leaving
)

// member is our node in the barrier.
type member struct {
	name    string // "_c_<uuid>-member"
	node    string // full path
	session *framework.Session
	// ready is the stamp of the ready node we passed on (see createReady),
	// noStamp if unknown: Leave deletes the ready node only while the
	// stamp holds, so never the ready node of a later round.
	ready stamp
}

// stamp tells a ready node from a later round's: the barrier node's data
// version made with it, on that barrier node (its czxid: the barrier node
// is a container, reaped once empty and made again with its versions from
// 0, so a later round's first ready node has the version of ours).
type stamp struct {
	version int32 // -1: none
	czxid   int64
}

var noStamp = stamp{version: -1}

// hooks let tests stop a member between its steps and wake it spuriously.
type hooks struct {
	afterCreate  func()          // after our node is made, before the first count
	wake         chan struct{}   // a receive wakes an Enter waiter (GH-1290)
	beforeRelist func(ours bool) // in Leave, before each listing after a wait
	// beforeDeleteReady: in Leave, once the ready node to delete was read
	beforeDeleteReady func()
}

// NewDoubleBarrier returns a member of the double barrier at path, which
// opens once memberQty members have entered. It does no I/O; it fails
// (wrapping curator.ErrInvalidArgument) for a nil client, an invalid path or
// memberQty <= 0.
func NewDoubleBarrier(client *framework.Client, path string, memberQty int) (*DoubleBarrier, error) {
	if err := recipe.CheckArgs(client, "barrier", path); err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	if memberQty <= 0 {
		return nil, fmt.Errorf("barrier: %w: memberQty %d must be positive", curator.ErrInvalidArgument, memberQty)
	}
	return &DoubleBarrier{client: client, path: path, readyPath: framework.JoinPath(path, layout.ReadyNode), qty: memberQty}, nil
}

// Path returns the barrier's path.
func (d *DoubleBarrier) Path() string { return d.path }

// MemberQty returns the number of members the barrier waits for.
func (d *DoubleBarrier) MemberQty() int { return d.qty }

// Node returns our member node's path while we are in the barrier (between
// a successful Enter and Leave), "" otherwise.
func (d *DoubleBarrier) Node() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		return ""
	}
	return d.m.node
}

// Enter joins the barrier and blocks until memberQty members have entered
// (Curator's enter). It creates our member node "<path>/_c_<uuid>-member"
// (ephemeral and protected, so that a create whose reply was lost, or
// that is still under way when Enter gives up, is found and deleted and
// never leaves a member that counts; missing parents are made as
// container nodes), then counts
// the members (every child but "ready"): once there are memberQty, it
// creates "<path>/ready" and returns; until then it waits for the children
// of the barrier path to change and counts again. A ready node already
// there lets it through at once, as in Curator.
//
// Every wake-up re-counts, so nothing but the condition lets a caller
// through (apache/curator#1290). If ctx is done, or anything fails, Enter
// deletes our member node before it returns, so that a member that gave
// up stops counting (Curator keeps it, and it counts for good); if the
// create itself was still under way, the node is deleted in the background
// as soon as the create's outcome is known. The delete cannot take back a
// count already made: another member that counts us just before it and
// makes the ready node passes with us counted, and without us.
//
// The member whose count opens the barrier is in once that is known:
// when its transaction making the ready node took effect, Enter returns
// nil at once, even if ctx is done by then. When that transaction got no
// answer (ctx ended while it was under way, or the connection was lost)
// and Enter then fails, Enter looks, under a clean-up context (up to 5 s),
// whether the ready node exists and our member node is still there, of our
// session: if both hold, the barrier opened with us counted, and Enter
// returns nil, ctx done or not; otherwise it fails as above.
//
// The error wraps ctx.Err(), or
// curator.ErrNodeVanished and curator.ErrSessionLost when our session was lost
// (our node went with it), or curator.ErrNodeVanished alone when someone else
// deleted our node. The other members are not told: they go on waiting
// for memberQty members, and pass if enough enter (a member whose session
// was lost may simply Enter again, in its client's new session).
//
// The wait is a child watch on the barrier path (one per client, shared by
// the client's members), which is told both of new members and of the
// ready node. A member that gives up deletes its own node, which fires the
// watch, so no watch of its stays on the server.
func (d *DoubleBarrier) Enter(ctx context.Context) error {
	if _, err := d.begin(ctx, idle, entering); err != nil {
		return err
	}
	m, err := d.enter(ctx)

	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.state = idle
		return err
	}
	d.state, d.m = entered, m
	return nil
}

// begin moves the member from state from to state to (Enter: idle to
// entering; Leave: entered to leaving) and returns its member node, if
// any. A nil ctx is refused; a member in another state is busy (Enter) or
// not entered (Leave).
func (d *DoubleBarrier) begin(ctx context.Context, from, to memberState) (*member, error) {
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state != from {
		if from == idle {
			return nil, fmt.Errorf("barrier: enter %s: already entering or in the barrier: %w", d.path, curator.ErrBusy)
		}
		return nil, fmt.Errorf("barrier: leave %s: not entered: %w", d.path, curator.ErrNotHeld)
	}
	d.state = to
	return d.m, nil
}

func (d *DoubleBarrier) enter(ctx context.Context) (*member, error) {
	m, err := d.createMember(ctx)
	if err != nil {
		return nil, err
	}
	if d.hooks != nil && d.hooks.afterCreate != nil {
		d.hooks.afterCreate()
	}
	unsure, err := d.awaitReady(ctx, m)
	if err != nil && unsure && d.openedWithUs(ctx, m) {
		err = nil // our ready node was made after all, with us counted: we are in
	}
	if err != nil {
		d.abandon(ctx, m)
		return nil, err
	}
	return m, nil
}

// createMember makes our ephemeral member node. The create is protected:
// the framework adopts a node of a lost reply only if it is of our current
// session (CURATOR-498), and when the create fails or ctx ends while it is
// under way, it deletes the node in the background once the create's real
// outcome is known, so a late create never leaves an orphan member
// (deleting at once could run before the create lands).
func (d *DoubleBarrier) createMember(ctx context.Context) (*member, error) {
	n, err := d.client.CreateNode(ctx, framework.JoinPath(d.path, layout.MemberName), d.client.DefaultData(),
		framework.WithMode(framework.ModeEphemeral), framework.WithProtection(), framework.WithParentContainers())
	if err != nil {
		return nil, fmt.Errorf("barrier: enter %s: %w", d.path, err)
	}
	return &member{name: framework.NodeName(n.Path), node: n.Path, session: n.Session, ready: noStamp}, nil
}

// vanished is the error for our member node gone while we are in the barrier.
func (m *member) vanished() error {
	if m.session.Lost() {
		return fmt.Errorf("barrier: our member node %s vanished: %w: %w", m.node, curator.ErrNodeVanished, m.session.Err())
	}
	return fmt.Errorf("barrier: our member node %s vanished: %w", m.node, curator.ErrNodeVanished)
}

// split separates the ready node from the members among children.
func split(children []string) (ready bool, members []string) {
	members = make([]string, 0, len(children))
	for _, c := range children {
		if c == layout.ReadyNode {
			ready = true
		} else {
			members = append(members, c)
		}
	}
	return ready, members
}

// awaitReady counts members until memberQty are in or the ready node is
// there; every wake-up counts again. Once our own transaction made the
// ready node, the barrier is open with us counted: it returns at once,
// without counting again (ctx may be done by then). unsure says, with an
// error, that our transaction making the ready node got no answer and
// nothing was read since: it may have made the node.
func (d *DoubleBarrier) awaitReady(ctx context.Context, m *member) (unsure bool, err error) {
	var wake chan struct{}
	if d.hooks != nil {
		wake = d.hooks.wake
	}
	for {
		if m.session.Lost() {
			return unsure, m.vanished()
		}
		children, _, w, err := d.client.ChildrenW(ctx, d.path)
		if errors.Is(err, zk.ErrNoNode) {
			return false, m.vanished() // the barrier path is gone, and our node with it
		}
		if err != nil {
			return unsure, fmt.Errorf("barrier: enter %s: %w", d.path, err)
		}
		unsure = false // read after our transaction: what it did is in children
		ready, members := split(children)
		switch {
		case !slices.Contains(members, m.name):
			w.Stop()
			return false, m.vanished()
		case ready:
			w.Stop()
			m.ready = d.readyStamp(ctx)
			return false, nil
		case len(members) >= d.qty:
			w.Stop()
			outcome, st, err := d.createReady(ctx, m)
			switch {
			case outcome == readyMade:
				m.ready = st
				return false, nil
			case err != nil:
				return outcome == readyUnknown, err
			}
			unsure = outcome == readyUnknown
			continue // count again: the ready node is there now
		}
		select {
		case ev := <-w.C():
			if ev.Type == framework.EventNotWatching && !errors.Is(ev.Err, curator.ErrSessionLost) {
				return false, fmt.Errorf("barrier: enter %s: %w", d.path, ev.Err) // client closed
			}
			// A child came or went, or the session was lost (checked
			// above): count again.
		case <-m.session.Done():
		case <-wake:
		case <-ctx.Done():
			w.Stop()
			return false, fmt.Errorf("barrier: enter %s: %w", d.path, ctx.Err())
		}
		w.Stop()
	}
}

// readyOutcome is what became of our transaction making the ready node.
type readyOutcome int

const (
	readyNotMade readyOutcome = iota // refused, or not sent
	readyMade                        // it made the ready node
	readyUnknown                     // no answer: it may have
)

// createReady creates the ready node, and in the same transaction rewrites
// the barrier node's data as it is: its data version, bumped with every
// ready node a gocurator member makes, tells this round's ready node from
// a later one's (ZooKeeper cannot check a creation zxid). The transaction
// also checks that our member node exists, so a ready node we made was
// made with us counted. readyMade comes with the version stamped (see
// readyStamp). Another member making it first (zk.ErrNodeExists, or
// zk.ErrBadVersion for the barrier node), our node or the barrier node
// gone (zk.ErrNoNode), or a lost reply (readyUnknown) is no failure: the
// caller counts again. ctx ending while the transaction is under way is a
// failure with readyUnknown: the server may have carried it out.
func (d *DoubleBarrier) createReady(ctx context.Context, m *member) (readyOutcome, stamp, error) {
	data, st, err := d.client.Get(ctx, d.path)
	if err != nil {
		if errors.Is(err, zk.ErrNoNode) || framework.IsRetryable(err) {
			return readyNotMade, noStamp, nil
		}
		return readyNotMade, noStamp, fmt.Errorf("barrier: enter %s: creating %s: %w", d.path, layout.ReadyNode, err)
	}
	res, err := d.client.Multi(ctx,
		framework.CreateOp{Path: d.readyPath, Data: d.client.DefaultData()},
		framework.SetDataOp{Path: d.path, Data: data, Version: st.Version},
		framework.CheckOp{Path: m.node, Version: -1})
	switch {
	case err == nil:
		made := noStamp
		if len(res) > 1 && res[1].Stat != nil {
			made = stamp{res[1].Stat.Version, res[1].Stat.Czxid}
		}
		return readyMade, made, nil
	case errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		return readyNotMade, noStamp, nil // counting again says who made it, or what is gone
	case framework.IsRetryable(err):
		return readyUnknown, noStamp, nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return readyUnknown, noStamp, fmt.Errorf("barrier: enter %s: creating %s: %w", d.path, layout.ReadyNode, err)
	}
	return readyNotMade, noStamp, fmt.Errorf("barrier: enter %s: creating %s: %w", d.path, layout.ReadyNode, err)
}

// openedWithUs finds out, after our transaction making the ready node got
// no answer and Enter then failed, whether the barrier opened with us
// counted: the ready node exists and our member node is still there, of
// our session (then it also records the ready node's stamp). It reads
// under a clean-up context, ctx being done perhaps. The transaction went
// out before on the same session (unless ctx ended before the framework
// even queued it, a window of a few instructions), so the server answers
// the reads after it; the sync first brings a server we reconnected to
// (after a connection loss) up to date with it. A read that fails, or a
// lost session, is a no.
func (d *DoubleBarrier) openedWithUs(ctx context.Context, m *member) bool {
	if m.session.Lost() {
		return false
	}
	cctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	if err := d.client.Sync(cctx, d.path); err != nil {
		return false
	}
	ok, _, err := d.client.Exists(cctx, d.readyPath)
	if err != nil || !ok {
		return false
	}
	ok, st, err := d.client.Exists(cctx, m.node)
	if err != nil || !ok || st.EphemeralOwner != m.session.ID() {
		return false
	}
	m.ready = d.readyStamp(cctx)
	return true
}

// readyStamp returns the stamp of the ready node there now, or noStamp:
// no ready node, or one not made with a stamp (by a Curator member, whose
// members delete it themselves), or a newer one came between the two
// reads. The barrier node's version is the stamp only when it was last
// modified in the transaction that made the ready node.
func (d *DoubleBarrier) readyStamp(ctx context.Context) stamp {
	ok, rst, err := d.client.Exists(ctx, d.readyPath)
	if err != nil || !ok {
		return noStamp
	}
	ok, pst, err := d.client.Exists(ctx, d.path)
	if err != nil || !ok || pst.Mzxid != rst.Czxid {
		return noStamp
	}
	return stamp{pst.Version, pst.Czxid}
}

// abandon deletes our member node after a failed Enter or Leave. With the
// session lost, or no connection, it does not wait: the delete goes on in
// the background (the node is gone, or goes with its session).
func (d *DoubleBarrier) abandon(ctx context.Context, m *member) {
	if m.session.Lost() || !d.client.Connected() {
		d.client.DeleteInBackground(m.node)
		return
	}
	cctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	if err := recipe.DeleteOwn(cctx, d.client, m.node); err != nil {
		d.client.Logger().Warn("deleting our barrier member node", "node", m.node, "err", err)
	}
}

// Leave leaves the barrier and blocks until every member has left
// (Curator's leave, the ZooKeeper recipe's protocol). In a loop it lists
// the members (children but "ready", sorted): none left, done; only ours
// left, delete it, done; ours the lowest, wait for the highest to go;
// otherwise delete ours (once) and wait for the lowest to go. So the
// lowest member leaves last and the others wait for it.
//
// Leave waits only for the members that were in the barrier when it
// started: a member that enters meanwhile (the next round, on the same
// path) is not waited for, so consecutive rounds cannot deadlock. A member
// that vanishes (its session expired) counts as left. Once our own node is
// deleted our session no longer matters, and a session loss is ridden
// out; while it still exists (we are the lowest), losing the session fails
// Leave with curator.ErrNodeVanished and curator.ErrSessionLost. If our node
// is missing when Leave starts, that error (or curator.ErrNodeVanished alone if
// someone deleted it) is returned too.
//
// ctx bounds the whole of Leave (CURATOR-233). When it is done, Leave
// deletes our node if it is still there (we give up waiting, but leave),
// and returns an error wrapping ctx.Err(). When Leave completes, or gives
// up so, it then deletes the ready node, as Curator does on a normal
// finish and on timeout (CURATOR-536), so that a crashed round does not
// leave a ready node that lets the next round through without waiting;
// but only the ready node this member passed on, never a later round's
// (checked in one transaction with the delete, see createReady). (As in
// Curator, a member that gives up so can strand one that was counted to
// open the barrier but had not yet looked: it finds neither the ready
// node nor enough members.) A Leave that fails otherwise (our node
// vanished, our session was lost, a read failed) leaves the ready node
// alone, as Curator's throws before its delete. A ready node made by a
// Curator member is left to the Curator members, which delete it as they
// leave. After Leave the DoubleBarrier can Enter again.
func (d *DoubleBarrier) Leave(ctx context.Context) error {
	m, err := d.begin(ctx, entered, leaving)
	if err != nil {
		return err
	}
	err = d.leave(ctx, m)

	d.mu.Lock()
	d.state, d.m = idle, nil
	d.mu.Unlock()
	return err
}

func (d *DoubleBarrier) leave(ctx context.Context, m *member) error {
	ours, err := d.awaitLeft(ctx, m)
	if err != nil && ours {
		d.abandon(ctx, m)
	}
	// The ready node goes when the round is done, or when we gave up
	// waiting (ctx: Curator's timeout, which breaks out of its loop to
	// the delete since CURATOR-536). Not after any other failure (our
	// node vanished with our session, a read failed): Curator throws
	// before the delete then, and a member that made its node and was
	// counted to open the barrier, but has not looked yet, still needs
	// the ready node to pass: without it it counts one member short and
	// waits for good.
	if err == nil || (ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		d.deleteReady(ctx, m)
	}
	return err
}

// awaitLeft runs the leave protocol; ours says whether our node may still
// exist when it returns.
func (d *DoubleBarrier) awaitLeft(ctx context.Context, m *member) (ours bool, err error) {
	ours = true
	var inBarrier map[string]bool // the members there when we started
	for first := true; ; first = false {
		if !first && d.hooks != nil && d.hooks.beforeRelist != nil {
			d.hooks.beforeRelist(ours)
		}
		if ours && m.session.Lost() {
			return ours, m.vanished()
		}
		children, _, err := d.client.Children(ctx, d.path)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return ours, fmt.Errorf("barrier: leave %s: %w", d.path, err)
		}
		_, members := split(children)
		if inBarrier == nil {
			inBarrier = make(map[string]bool, len(members))
			for _, n := range members {
				inBarrier[n] = true
			}
		} else {
			members = slices.DeleteFunc(members, func(n string) bool { return !inBarrier[n] })
		}
		slices.Sort(members)
		idx := slices.Index(members, m.name)
		if ours && idx < 0 {
			return false, m.vanished()
		}
		if len(members) == 0 { // everyone left (ours went before)
			return false, nil
		}
		if len(members) == 1 && idx == 0 {
			if err := recipe.DeleteOwn(ctx, d.client, m.node); err != nil {
				return ours, fmt.Errorf("barrier: leave %s: %w", d.path, err)
			}
			return false, nil
		}
		var target string
		if idx == 0 {
			target = members[len(members)-1] // we are the lowest: wait for the highest
		} else {
			target = members[0] // wait for the lowest, after deleting ours
			if ours {
				if err := recipe.DeleteOwn(ctx, d.client, m.node); err != nil {
					return ours, fmt.Errorf("barrier: leave %s: %w", d.path, err)
				}
				ours = false
			}
		}
		// getData, not exists: a node gone meanwhile leaves no watch.
		_, _, w, err := d.client.GetW(ctx, framework.JoinPath(d.path, target))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return ours, fmt.Errorf("barrier: leave %s: %w", d.path, err)
		}
		var lost <-chan struct{}
		if ours {
			lost = m.session.Done()
		}
		select {
		case ev := <-w.C():
			if ev.Type == framework.EventNotWatching && !errors.Is(ev.Err, curator.ErrSessionLost) {
				return ours, fmt.Errorf("barrier: leave %s: %w", d.path, ev.Err) // client closed
			}
			// The node went (or the session did: with our node deleted,
			// look again in the new session).
		case <-lost:
		case <-ctx.Done():
			w.Stop()
			return ours, fmt.Errorf("barrier: leave %s: %w", d.path, ctx.Err())
		}
		w.Stop()
	}
}

// deleteReady deletes the ready node if it is the one we passed on: in
// one transaction with a check that the barrier node's data version is
// still the stamp made with it, on the barrier node the stamp was made on,
// so a later round's ready node is never deleted.
func (d *DoubleBarrier) deleteReady(ctx context.Context, m *member) {
	if m.ready.version < 0 || !d.client.Connected() {
		return // not ours to delete, or not now: the other members do it
	}
	cctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	if d.hooks != nil && d.hooks.beforeDeleteReady != nil {
		d.hooks.beforeDeleteReady()
	}
	// A transaction cannot check a czxid: this read leaves a round trip in
	// which the barrier node would have to be reaped and made again, and
	// a whole round enter, for a later ready node to go.
	ok, st, err := d.client.Exists(cctx, d.path)
	if err != nil || !ok || st.Czxid != m.ready.czxid {
		return
	}
	_, err = d.client.Multi(cctx,
		framework.CheckOp{Path: d.path, Version: m.ready.version},
		framework.DeleteOp{Path: d.readyPath, Version: -1})
	if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
		d.client.Logger().Warn("deleting the barrier's ready node", "node", d.readyPath, "err", err)
	}
}
