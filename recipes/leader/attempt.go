package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/recipe"
)

// testHookVerify, set only by tests, runs when an attempt has found its node
// first in line, before it checks with the server that the node is still
// its own (Contender.Verify).
var testHookVerify func(c *driver.Contender)

// campaign takes part with c (nil: a new node) until our node is first in
// line and the server confirms it is ours, in a session the client has not
// given up (Curator's LeaderLatch.checkLeadership with the owner check of
// CURATOR-696). It rides out what passes: a connection lost for a while
// (the same node, once back), our node gone with its session or deleted by
// someone else, the whole path deleted (a new node, and the path again:
// CURATOR-724). It waits on its one predecessor only, and a predecessor
// gone before the wait is found by reading again, never by starting over
// (CURATOR-645). It ends with ctx, when the client closes, or on an error
// that retrying cannot cure (the server refusing us: zk.ErrNoAuth, say);
// then its node, if any, is deleted before it returns.
func (e *engine) campaign(ctx context.Context, c *driver.Contender) (*driver.Contender, int64, error) {
	var pause backoff
	fail := func(err error) (*driver.Contender, int64, error) {
		if c != nil {
			c.DeleteQuietly(ctx)
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, 0, fmt.Errorf("leader: %s: campaign: %w", e.path, err)
	}
	for {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if c != nil && c.Session().Lost() {
			c = drop(ctx, c) // it goes with its session
		}
		if c == nil {
			cctx, cancel := e.createContext(ctx)
			var err error
			c, err = e.d.Enqueue(cctx, e.data)
			cancel()
			if err != nil {
				c = nil
				if !transient(err) || ctx.Err() != nil {
					return fail(err)
				}
				if err := pause.wait(ctx); err != nil {
					return fail(err)
				}
				continue
			}
			if e.opts.OnEnqueue != nil {
				e.opts.OnEnqueue(c.Node())
			}
			e.setNode(c.Node())
		}
		err := c.Wait(ctx, &driver.WaitOptions{})
		if err == nil {
			if testHookVerify != nil {
				testHookVerify(c)
			}
			token, verr := c.Verify(ctx)
			if verr == nil {
				return c, token, nil
			}
			err = verr
		}
		switch {
		case ctx.Err() != nil || errors.Is(err, curator.ErrClosed):
			return fail(err)
		case errors.Is(err, curator.ErrNodeVanished):
			// Our node is gone: deleted by someone else, or with its session.
			// Take part again with a new one (after a pause if its session
			// lives: someone may be deleting nodes as fast as we make them).
			lost := c.Session().Lost()
			c = drop(ctx, c)
			if !lost {
				if err := pause.wait(ctx); err != nil {
					return fail(err)
				}
			}
		case transient(err):
			if err := pause.wait(ctx); err != nil {
				return fail(err)
			}
		default:
			return fail(err)
		}
	}
}

// createContext is the context of our node's create. It is not cancelled
// with ctx (it is bounded by the clean-up timeout): a create cut short
// would leave its node to the client's background clean-up, after Close
// had returned; made, the node is deleted by campaign if ctx ended
// meanwhile. Except while the client has never had a session: no create
// can have reached a server then (the client sends nothing before its
// first session; one that races it is found and deleted by that clean-up),
// and waiting for a server that may never answer would hold Close up.
func (e *engine) createContext(ctx context.Context) (context.Context, context.CancelFunc) {
	cctx, cancel := recipe.CleanupContext(ctx)
	stop := context.AfterFunc(ctx, func() {
		if e.client.Session() == nil {
			cancel()
		}
	})
	return cctx, func() { stop(); cancel() }
}

// drop gives c up: its node is deleted, gone or not. A node of a session
// the client declared lost stays on the server until the server expires
// that session, and in line it would keep everyone behind it waiting that
// long (Curator's reset deletes it too, CURATOR-696).
func drop(ctx context.Context, c *driver.Contender) *driver.Contender {
	c.DeleteQuietly(ctx)
	return nil
}

// setNode publishes our node while an attempt makes one.
func (e *engine) setNode(node string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.node = node
}

// transient reports whether err passes with time: the connection or the
// session was lost, the retry loop gave up for now.
func transient(err error) bool {
	return framework.IsRetryable(err) || errors.Is(err, curator.ErrSessionLost)
}

// backoff is the pause between attempts: 50 ms doubling to 2 s.
type backoff struct{ d time.Duration }

const (
	minPause = 50 * time.Millisecond
	maxPause = 2 * time.Second
)

func (b *backoff) next() time.Duration {
	if b.d < minPause {
		b.d = minPause
	} else if b.d *= 2; b.d > maxPause {
		b.d = maxPause
	}
	return b.d
}

func (b *backoff) reset() { b.d = 0 }

func (b *backoff) wait(ctx context.Context) error {
	t := time.NewTimer(b.next())
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// timer is a stoppable time.AfterFunc; a nil timer stops as a no-op.
type timer struct{ t *time.Timer }

func startTimer(d time.Duration, f func()) *timer { return &timer{time.AfterFunc(d, f)} }

func (t *timer) stop() {
	if t != nil {
		t.t.Stop()
	}
}
