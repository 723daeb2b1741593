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
	var ho *handoff // what the process knows of deleted contenders (handoff.go)
	if d.handoff && !o.Try {
		ho = known.join(d.client, d.path)
		defer known.leave(ho)
	}
	watchAll := o.WatchAll && !o.Try // decide on watched reads (the last decision was Decision{})
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
				if held, err := c.handedOff(ctx, ho, q, dec.Watch); held || err != nil {
					return err
				}
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
		case ev := <-w.C():
			w.Stop()
			if dec.Watch != "" && ev.Type == framework.EventNodeDeleted {
				if held, err := c.handedOff(ctx, ho, q, dec.Watch); held || err != nil {
					return err
				}
			}
		case <-wake:
			w.Stop()
		case <-c.session.Done():
			w.Stop()
		case <-ctx.Done():
			w.Stop()
			return ctx.Err()
		}
	}
}

// handedOff records that pred, our predecessor in q, is gone, and reports
// whether we now hold without reading the queue again: every contender
// before pred in q is known gone, and our own node is still there (one
// exists, whatever the queue's length). See handoff.go for why that is
// enough. false, nil: read the queue again.
func (c *Contender) handedOff(ctx context.Context, ho *handoff, q *queue, pred string) (bool, error) {
	if ho == nil {
		return false, nil
	}
	known.deleted(c.d.client, c.d.path, pred)
	if i, ok := q.index[pred]; !ok || !known.goneBefore(ho, q, i) {
		return false, nil
	}
	ok, _, err := c.d.client.Exists(ctx, c.node)
	switch {
	case err != nil:
		return false, err
	case !ok:
		return false, c.vanished()
	}
	return true, nil
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
