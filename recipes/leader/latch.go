package leader

import (
	"context"
	"fmt"
	"sync"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
)

// Latch is Curator's LeaderLatch: once started, it takes part in the
// election on its path until closed, leading whenever its node is first in
// line. Its nodes are Curator's ("<path>/_c_<uuid>-latch-<seq>", the
// participant id as data), so Curator LeaderLatch participants on the same
// path take part in the same election, with the same order.
//
// Leadership is lost (the context Await returned is cancelled with a cause
// wrapping curator.ErrLockLost, listeners hear NotLeader) when the
// connection is suspended (by default; see WithSuspendPolicy), the session
// is lost, or someone else deletes our node. The latch takes part on: on
// the same node while its session lives (so, as with Curator, it leads
// again once reconnected if nobody took over, with the same fencing token),
// on a new one otherwise. Await again for the next term.
//
// Safe for concurrent use. Close it when done.
type Latch struct {
	participant
	mode CloseMode
	lis  *dispatcher

	mu     sync.Mutex // guards lis and closed
	closed bool       // CloseWith ran: no dispatcher starts any more
}

// NewLatch returns a latch with the given participant id on path
// (LeaderLatch(client, path, id)). It does no I/O. A nil client, an invalid
// path, an empty id or a bad option gives an error wrapping
// curator.ErrInvalidArgument. Options: WithSuspendPolicy, WithOnEnqueue,
// WithCloseMode.
func NewLatch(client *framework.Client, path, id string, opts ...Option) (*Latch, error) {
	o, err := buildOptions(opts, "Latch", "WithCloseMode")
	if err != nil {
		return nil, err
	}
	e, err := newEngine(client, path, id, layout.LatchName, telemetry.KindLatch, o)
	if err != nil {
		return nil, err
	}
	e.rejoin = true
	l := &Latch{participant: participant{e}, mode: o.closeMode}
	e.notify = l.tell
	return l, nil
}

// tell queues a change for the listeners, if any were ever added.
func (l *Latch) tell(leading bool) {
	l.mu.Lock()
	lis := l.lis
	l.mu.Unlock()
	if lis != nil {
		lis.push(leading)
	}
}

// Start makes the latch take part (in the background: it connects and
// creates its node by itself). A second Start fails with curator.ErrBusy,
// a Start after Close with curator.ErrClosed (the engine's own checks).
func (l *Latch) Start() error { return l.e.send(cmd{kind: cmdJoin}).err }

// AddListener adds a listener (Curator's addListener); the returned func
// removes it. Listeners added before Start hear every change.
func (l *Latch) AddListener(li Listener) (remove func()) {
	if li == nil {
		return func() {}
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return func() {} // nothing will be told: no goroutine to tell it
	}
	if l.lis == nil {
		l.lis = newDispatcher()
	}
	lis := l.lis
	l.mu.Unlock()
	return lis.add(li)
}

// Await blocks until the latch leads, and returns the leader context
// (cancelled when this term of leadership ends, see Latch), or ctx's error
// (wrapped), or an error wrapping curator.ErrClosed once the latch or its
// client is closed (Curator's EOFException). Before Start it waits for
// Start.
func (l *Latch) Await(ctx context.Context) (context.Context, error) {
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	for {
		t, closed, changed := l.e.current()
		switch {
		case closed:
			return nil, l.e.errClosed()
		case l.e.clientClosed():
			return nil, fmt.Errorf("leader: %s: await: client %w", l.e.path, curator.ErrClosed)
		case t != nil:
			return t.Context(), nil
		}
		select {
		case <-changed:
		case <-l.e.client.Done():
		case <-ctx.Done():
			return nil, fmt.Errorf("leader: %s: await: %w", l.e.path, ctx.Err())
		}
	}
}

// HasLeadership reports whether the latch leads now (no I/O).
func (l *Latch) HasLeadership() bool { return l.e.isLeader() }

// Leader, Participants, Observe, FencingToken, GuardedMulti, ID, Path and
// Node are Election's (Curator's getLeader, getParticipants, getId,
// getOurPath).

// Close closes the latch with its close mode (WithCloseMode; Curator's
// close()). See CloseWith.
func (l *Latch) Close() error { return l.CloseWith(l.mode) }

// CloseWith closes the latch (Curator's close(mode)): it leaves the
// election (our node deleted; leadership, if any, ends), and with
// CloseNotifyLeader a leading latch's listeners hear NotLeader. It returns
// once every goroutine of the latch has ended and the listener calls it
// queued are done, except while a listener call runs (it may be the one
// closing the latch: a listener may): then the listeners' goroutine
// delivers what is queued and ends after Close returns. A listener added
// after Close is never called. Idempotent.
func (l *Latch) CloseWith(mode CloseMode) error {
	if !mode.valid() {
		return fmt.Errorf("leader: %w: unknown close mode %d", curator.ErrInvalidArgument, mode)
	}
	err := l.e.close(mode)
	l.mu.Lock()
	l.closed = true
	lis := l.lis
	l.mu.Unlock()
	if lis != nil {
		lis.stop()
	}
	return err
}
