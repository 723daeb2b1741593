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
func (c *Contender) Wait(ctx context.Context, o WaitOptions) error {
	d := c.d
	watchAll := false // the last decision was Decision{}: decide on watched reads
	for {
		if c.session.Lost() {
			return c.vanished()
		}
		var wake <-chan struct{}
		if o.Wake != nil {
			wake = o.Wake() // before the read and the decision: a change after them closes it
		}
		var (
			q   *queue
			w   *framework.Watch
			err error
		)
		if watchAll {
			q, w, err = d.queueW(ctx)
		} else {
			// Shared: a thousand waiters of one process make one read (never
			// one older than their own call) and sort it once.
			q, err = d.queueShared(ctx)
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
				err = fmt.Errorf("%s: %w", d.path, curator.ErrLocked)
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
func (c *Contender) decide(q *queue) (Decision, error) {
	ours, ok := q.index[c.name]
	if !ok {
		return Decision{}, c.vanished()
	}
	return c.d.pred(q.sorted, ours)
}

// vanished is the error of a contender whose node is gone.
func (c *Contender) vanished() error {
	if c.session.Lost() {
		return fmt.Errorf("%w: %s: %w", curator.ErrNodeVanished, c.node, c.session.Err())
	}
	return fmt.Errorf("%w: %s", curator.ErrNodeVanished, c.node)
}
