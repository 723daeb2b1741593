package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// WaitOptions tune Contender.Wait.
type WaitOptions struct {
	// Try: do not wait; report curator.ErrLocked if not held at once.
	Try bool
	// Wake, if not nil, is called before each read of the queue (so before
	// the Predicate reads what Wake tells of); the waiter looks again when
	// the channel it returns is closed or receives (e.g. a semaphore whose
	// maximum changed). Return a fresh channel after each change.
	Wake func() <-chan struct{}
	// OnEnqueue, if not nil, is called by Acquire with the node's path as
	// soon as it is made, before the wait.
	OnEnqueue func(node string)
	// Fits, if not nil, says whether a count of contenders (ours included)
	// holds by itself (the semaphore's count rule): when the create told
	// how many children the path had right after it, a count that fits
	// holds without reading the queue.
	Fits func(contenders int) bool
	// OnWoken, if not nil, is called on the waiting goroutine when the
	// watch on its predecessor tells of its deletion (not when the
	// predecessor was gone before the watch was set) and finding out
	// whether it now holds takes one more round trip (the handoff's exists
	// of our node, or a read of the queue): a recipe may start then,
	// beside that round trip, what it will do first once it holds (the
	// semaphore's lease create). Not when the client knows at once that
	// the waiter holds (a handoff with our node's mark intact, handoff.go
	// 4.): there is no round trip to overlap then, and the caller does it
	// next on its own goroutine. If the waiter then does not hold (it
	// waits again, or fails), Wait calls the undo returned before it waits
	// or returns; if it holds, the work is the caller's.
	OnWoken func() (undo func())
	// With are the other contenders of the same acquisition (the
	// semaphore's AcquireN makes n nodes and waits on the last): a decision
	// needs each of them in the queue too, and one missing ends the wait
	// as our own node missing does (curator.ErrNodeVanished).
	With []*Contender
	// WatchAll decides on watched reads of the queue from the first read,
	// for a Predicate that waits for any change (Decision{}) and seldom
	// holds at once (the semaphore's lease wait, as Curator's): one read
	// instead of an unwatched one and then a watched one. The watch of a
	// read that holds at once stays on the server until the next change.
	WatchAll bool
}

// testHookWaiting, set only by tests, runs when Wait has decided to wait,
// just before it waits: a test changes the queue there, where a change must
// still wake the waiter.
var testHookWaiting func(c *Contender)

// SetWaitHook sets the hook Wait runs once it has decided to wait, just
// before it waits (tests only); the returned func restores the previous
// one. Set it only while no Wait runs.
func SetWaitHook(f func(c *Contender)) (restore func()) {
	old := testHookWaiting
	testHookWaiting = f
	return func() { testHookWaiting = old }
}

// testHookParked, set only by tests, runs each time Wait is about to park:
// every watch and mark of the round is set.
var testHookParked func(c *Contender)

// SetParkHook sets the hook Wait runs each time it is about to park, its
// watches and mark set (tests only); the returned func restores the
// previous one. Set it only while no Wait runs.
func SetParkHook(f func(c *Contender)) (restore func()) {
	old := testHookParked
	testHookParked = f
	return func() { testHookParked = old }
}

// Wait blocks until the Predicate says the contender holds, ctx is done,
// or the contender cannot ever hold: its node vanished
// (curator.ErrNodeVanished, wrapping curator.ErrSessionLost when its
// session was lost, CURATOR-527, or curator.ErrClosed when the client
// closed: Session.Err). Wait does not delete the node on failure; Acquire
// does.
//
// No change can slip between a decision to wait and the wait: a wait on one
// node sets its watch after the decision, and a node gone meanwhile makes it
// look again; a wait on any change (Decision{}) decides on the very read
// that set its watch (as Curator's semaphore does), and takes the Wake
// channel before that read, so a change after it fires the one or the other.
func (c *Contender) Wait(ctx context.Context, o *WaitOptions) error {
	// A waiter's stack (4 KB; issue 16: a thousand waiters' stacks are
	// most of their memory) is at its deepest in arm's watched read, with
	// this frame under it; the select's temporaries are in park, off that
	// path, so the read's worst case (the runtime's allocation slow path
	// under go-zookeeper's request) stays under the 4 KB stack's limit.
	r := round{o: o, watchAll: o.WatchAll && !o.Try, first: true}
	if c.d.handoff && !o.Try {
		r.ho, r.hoAt = c.d.handoffs.join(c.d.client, c.d.path, c.name)
	}
	defer r.end(c.d.handoffs)
	for {
		done, err := c.arm(ctx, &r)
		if r.undo != nil && (!done || err != nil) {
			r.undo() // woken, but not holding
			r.undo = nil
		}
		if done {
			return err
		}
		if r.w == nil {
			continue // look again
		}
		if testHookParked != nil {
			testHookParked(c)
		}
		deleted, err := c.park(ctx, &r)
		if err != nil {
			return err
		}
		if deleted {
			if held, err := c.handedOff(ctx, &r, true); held || err != nil {
				if err != nil && r.undo != nil {
					r.undo()
				}
				return err
			}
		}
	}
}

// park waits for r's watch, its wake channel, the session's end or ctx's;
// deleted: the predecessor waited on was deleted (the one case that may be
// a handoff).
//
//go:noinline
func (c *Contender) park(ctx context.Context, r *round) (deleted bool, err error) {
	select {
	case ev := <-r.w.C():
		deleted = r.pred != "" && ev.Type == framework.EventNodeDeleted
	case <-r.wake:
	case <-c.session.Done():
	case <-ctx.Done():
		return false, ctx.Err() // r.end stops the watch
	}
	r.w.Stop()
	r.w = nil
	return deleted, nil
}

// round is one Wait: its options, what its client knows of deleted
// contenders (handoff.go; nil when it does not hand off), the reading it
// last decided on, and what it waits for.
type round struct {
	o        *WaitOptions
	ho       *handoff
	hoAt     int // when it joined ho
	q        *Queue
	w        *framework.Watch
	pred     string // the contender waited on; "" for any change among them
	wake     <-chan struct{}
	undo     func()          // OnWoken's, until the waiter is found holding or not
	watchAll bool            // decide on watched reads (the last decision was Decision{})
	first    bool            // no reading yet
	onward   bool            // the decision waited on is Onward (onward.go)
	next     *Queue          // decide on this, the rest of q, instead of reading the queue (onward.go)
	own      *framework.Mark // marks our node while a handoff may come (handoff.go, 4.) or for an Onward wait (onward.go)
}

// end stops every watch the round still has, and leaves hs.
func (r *round) end(hs *handoffs) {
	if r.ho != nil {
		hs.leave(r.ho, r.hoAt)
	}
	if r.w != nil {
		r.w.Stop()
	}
}

// predFirst reports whether every contender before pred in r.q is known
// gone (so pred is first, or gone too); i is pred's place in r.q, -1 if
// it is not there.
func (c *Contender) predFirst(r *round) (first bool, i int) {
	seq, _ := c.d.Sequence(r.pred) // a name the predicate chose: a contender's
	i, ok := r.q.find(seq, r.pred)
	if !ok {
		return false, -1
	}
	return c.d.handoffs.goneBefore(r.ho, r.q, i), i
}

// arm reads the queue, decides, and sets the watch to wait on (r.w; nil:
// look again at once). done: Wait returns err (nil: held).
func (c *Contender) arm(ctx context.Context, r *round) (done bool, err error) {
	d, o := c.d, r.o
	if c.session.Lost() {
		return true, c.vanished()
	}
	r.wake, r.w, r.pred = nil, nil, ""
	if o.Wake != nil {
		r.wake = o.Wake() // before the read and the decision: a change after them closes it
	}
	siblings, listed := c.siblings, c.listed
	c.siblings, c.listed = 0, nil // known right after the create only
	next := r.next
	r.next, r.onward = nil, false
	switch {
	case next != nil:
		r.q = next // the rest of the last reading, its first contender gone (onward.go)
	case siblings > 0 && o.Fits != nil && len(o.With) == 0 && o.Fits(siblings):
		// Held by the count alone (the semaphore's rule). Not for a set
		// (AcquireN): a node of it deleted before our create leaves the
		// count fitting, and would be granted with no node; the read
		// below checks every node of the set.
		return true, nil
	case listed != nil:
		r.q = listed // listed right after our create, on its connection
	case siblings == 1:
		r.q = &Queue{entries: []entry{{c.seq, c.name}}} // the queue as it was right after our create
	case r.watchAll:
		r.q, r.w, err = d.queueW(ctx)
	default:
		// Shared: a thousand waiters of one client make one read (never
		// one older than their own call) and sort it once.
		r.q, err = d.queueShared(ctx)
	}
	if err != nil {
		return true, err
	}
	if r.first {
		r.first = false
		alone := r.q.Len() == 1
		if o.Fits != nil {
			alone = o.Fits(r.q.Len())
		}
		d.busy.Store(!alone)
	}
	dec, err := c.decide(r.q, o.With)
	if err != nil || dec.Held || o.Try {
		if r.w != nil {
			r.w.Stop()
		}
		switch {
		case err == nil && !dec.Held:
			err = fmt.Errorf("%s: %w", d.path, curator.ErrLocked)
		case err == nil && c.session.Lost():
			// Lost while we read (a read sent again in the next session
			// may still list our node, until the server expires the old
			// one): never held in it.
			err = c.vanished()
		}
		return true, err
	}
	if dec.Watch == "" {
		if !r.watchAll || r.w == nil {
			r.watchAll = true // decide again, on a watched read
			if r.w != nil {
				r.w.Stop()
				r.w = nil
			}
			return false, nil
		}
		if testHookWaiting != nil {
			testHookWaiting(c)
		}
		return false, nil
	}
	r.watchAll = false
	if r.w != nil {
		r.w.Stop()
	}
	if testHookWaiting != nil {
		testHookWaiting(c)
	}
	r.pred = dec.Watch
	if onward := dec.Onward && len(o.With) == 0; onward || c.mayHandOff(r) {
		// Our node marked before pred is watched: a pred found gone by
		// the watched read is then onward too (onward.go), or handed off
		// without an exists of our node (handoff.go, 4.).
		if done, err := c.markOwn(ctx, r); done {
			return true, err
		}
		r.onward = onward
	}
	_, _, r.w, err = d.client.GetW(ctx, framework.JoinPath(d.path, dec.Watch))
	if errors.Is(err, zk.ErrNoNode) {
		r.w = nil
		held, err := c.handedOff(ctx, r, false)
		return held || err != nil, err // else it went meanwhile: look again
	}
	if err != nil {
		return true, err
	}
	return false, nil
}

// mayHandOff reports whether r's wait on pred may end in a handoff
// (handoff.go, 5.): every contender before pred in r.q is known gone or
// this client's own, which tells its going (pred first among them), or
// pred is this client's own (a queue of one client's waiters, whose
// first holder may have been made before any waited and so not be known
// as ours). Otherwise pred's going is read as Curator reads it, and our
// node needs no mark.
func (c *Contender) mayHandOff(r *round) bool {
	if r.ho == nil {
		return false
	}
	seq, _ := c.d.Sequence(r.pred)
	i, ok := r.q.find(seq, r.pred)
	return ok && c.d.handoffs.toldBefore(r.ho, r.q, i, r.pred)
}

// markOwn marks our node (r.own), unless its mark is intact: the proof,
// without a request, that it was still there when pred went (handoff.go,
// 4.; onward.go). Its results are arm's: done with our node gone or an
// error.
func (c *Contender) markOwn(ctx context.Context, r *round) (done bool, err error) {
	if r.own.Intact() {
		return false, nil
	}
	r.own, err = c.d.client.MarkNode(ctx, c.node)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return true, c.vanished()
	case err != nil:
		return true, err
	}
	return false, nil
}

// handedOff records that pred, our predecessor in r.q, is gone, and
// reports whether we now hold without reading the queue again: every
// contender before pred in r.q is known gone, and our own node is still
// there (its mark intact: no request; else one exists, whatever the
// queue's length). See handoff.go for why that is enough. false, nil: read
// the queue again, or, for a waiter that does not hand off and whose
// decision was Onward, decide on the rest of r.q (onward.go).
func (c *Contender) handedOff(ctx context.Context, r *round, notified bool) (bool, error) {
	woken := func() { // one more round trip: OnWoken's
		if notified && r.o.OnWoken != nil {
			r.undo = r.o.OnWoken()
		}
	}
	if r.ho == nil {
		if c.onward(r); r.next == nil {
			woken() // the queue is read again
		}
		return false, nil
	}
	c.d.handoffs.deleted(c.d.client, c.d.path, r.q.czxid, r.pred)
	if first, _ := c.predFirst(r); !first {
		woken() // the queue is read again
		return false, nil
	}
	if r.own.Intact() && !c.session.Lost() {
		return true, nil // our node was there when pred went (handoff.go, 4.): no round trip, no OnWoken
	}
	woken()
	ok, _, err := c.d.client.Exists(ctx, c.node)
	switch {
	case err != nil:
		return false, err
	case !ok || c.session.Lost(): // an exists in the next session may still find it
		return false, c.vanished()
	}
	return true, nil
}

// decide applies the Predicate to our place in q, once ours and those of
// with are found there.
func (c *Contender) decide(q *Queue, with []*Contender) (Decision, error) {
	ours, ok := q.find(c.seq, c.name)
	if !ok {
		return Decision{}, c.vanished()
	}
	if q.czxid != 0 {
		c.czxid = q.czxid // the incarnation our node is in: it is listed there
	}
	for _, o := range with {
		if _, ok := q.find(o.seq, o.name); !ok {
			return Decision{}, o.vanished()
		}
	}
	return c.d.pred(q, ours)
}

// vanished is the error of a contender whose node is gone.
func (c *Contender) vanished() error {
	if c.session.Lost() {
		return fmt.Errorf("%w: %s: %w", curator.ErrNodeVanished, c.node, c.session.Err())
	}
	return fmt.Errorf("%w: %s", curator.ErrNodeVanished, c.node)
}
