package leader

import (
	"context"
	"fmt"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/recipe"
)

// Election is leader election in Go's shape (etcd's concurrency.Election,
// without its pitfalls) on Curator's LeaderLatch layout: Campaign blocks
// until this participant leads and returns a context that lives exactly as
// long as it can rely on leading; Resign gives leadership up; Observe
// tells who leads. Curator LeaderLatch participants on the same path take
// part in the same election.
//
// A term of leadership ends (its context is cancelled, with a cause
// wrapping curator.ErrLockLost) when its connection is suspended (by
// default; see WithSuspendPolicy) or its session lost, or when someone else
// deletes its node; and by Resign or Close (causes wrapping
// context.Canceled and curator.ErrClosed). The participant then is out of
// the election (its node is deleted): Campaign again to take part again, at
// the end of the line. For a participant that takes part until closed,
// keeping its place through a short disconnection as Curator's does, use a
// Latch.
//
// Safe for concurrent use; one Campaign at a time. Close it when done.
type Election struct{ e *engine }

// NewElection returns a participant with the given id (stored, UTF-8, in its
// node, as Curator's LeaderLatch does) in the election on path. It does no
// I/O. A nil client, an invalid path, an empty id or a bad option gives an
// error wrapping curator.ErrInvalidArgument. Options: WithSuspendPolicy,
// WithOnEnqueue.
func NewElection(client *framework.Client, path, id string, opts ...Option) (*Election, error) {
	o, err := buildOptions(opts, "Election")
	if err != nil {
		return nil, err
	}
	e, err := newEngine(client, path, id, layout.LatchName, o)
	if err != nil {
		return nil, err
	}
	return &Election{e}, nil
}

// Campaign takes part in the election and blocks until this participant
// leads, ctx is done (its node is then deleted and ctx's error returned,
// wrapped), or the election is closed (curator.ErrClosed). It rides out
// connection loss and session expiry while waiting (its place in line is
// kept while its session lives). It returns the leader context: cancelled
// the moment leadership can no longer be relied on (see Election); it
// carries ctx's values, not its deadline. Called while leading, it returns
// the current term's context; called while another Campaign waits, it
// fails with curator.ErrBusy.
func (el *Election) Campaign(ctx context.Context) (context.Context, error) {
	h, err := el.e.campaignTerm(ctx)
	if err != nil {
		return nil, err
	}
	return h.Context(), nil
}

// Resign gives leadership up: the term's context is cancelled and our node
// deleted, so the next in line leads. Its error follows the module's
// release rule (package curator, "Releasing"): nil once done, even if the
// delete goes on in the background; an error wrapping curator.ErrLockLost
// if our node was found already gone (another may have led meanwhile);
// curator.ErrNotHeld when not leading, including after a term ended by
// loss (its context told, with cause curator.ErrLockLost); nothing changes
// then, and a waiting Campaign is stopped by its own ctx.
func (el *Election) Resign(ctx context.Context) error { return el.e.resign(ctx) }

// IsLeader reports whether this participant leads now (no I/O).
func (el *Election) IsLeader() bool { return el.e.isLeader() }

// Observe reports the leader now and then each change it sees, including
// "nobody leads" (the zero Leader), on a channel closed when ctx is done or
// the election is closed. The first value comes at once. A change that
// comes while a value waits to be received replaces it: a slow receiver
// sees the latest leader, not every one in between.
func (el *Election) Observe(ctx context.Context) <-chan Leader { return el.e.observe(ctx) }

// Leader reads who leads now (the zero Leader if nobody), from ZooKeeper.
func (el *Election) Leader(ctx context.Context) (Leader, error) {
	if ctx == nil {
		return Leader{}, recipe.ErrNilContext
	}
	l, _, err := el.e.leader(ctx, false)
	return l, err
}

// Participants reads every participant, in line order, the leader first
// (Curator's getParticipants), from ZooKeeper.
func (el *Election) Participants(ctx context.Context) ([]Participant, error) {
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	ps, _, _, err := el.e.participants(ctx, false)
	return ps, err
}

// FencingToken returns, while leading, the creation zxid of our node: it
// strictly increases from one leader to the next, so a resource can refuse
// a stale leader. Errors: curator.ErrNotHeld when not leading,
// curator.ErrLockLost when the term was lost.
func (el *Election) FencingToken(ctx context.Context) (int64, error) {
	h, err := el.e.held()
	if err != nil {
		return 0, err
	}
	return h.FencingToken(ctx)
}

// GuardedMulti runs ops as one transaction that succeeds only while our
// node exists, so only while we lead; if it is gone the error wraps
// curator.ErrLockLost, the term ends, and nothing was written.
// curator.ErrNotHeld when not leading.
func (el *Election) GuardedMulti(ctx context.Context, ops ...framework.Op) ([]framework.OpResult, error) {
	h, err := el.e.held()
	if err != nil {
		return nil, err
	}
	return h.GuardedMulti(ctx, ops)
}

// ID returns the participant id.
func (el *Election) ID() string { return el.e.id }

// Path returns the election path.
func (el *Election) Path() string { return el.e.path }

// Node returns our node while taking part, else "".
func (el *Election) Node() string { return el.e.ourNode() }

// Close leaves the election: a waiting Campaign fails with curator.ErrClosed,
// the term (if any) ends, our node is deleted, observers' channels close;
// it returns once every goroutine of the election has ended. Later calls
// fail with curator.ErrClosed. Idempotent.
func (el *Election) Close() error { return el.e.close(CloseSilent) }

func (el *Election) String() string {
	return fmt.Sprintf("leader.Election(%s, %q)", el.e.path, el.e.id)
}
