package leader

import (
	"context"
	"fmt"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/telemetry"
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
type Election struct{ participant }

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
	e, err := newEngine(client, path, id, layout.LatchName, telemetry.KindElection, o)
	if err != nil {
		return nil, err
	}
	return &Election{participant{e}}, nil
}

// Campaign takes part in the election and blocks until this participant
// leads, ctx is done (its node is then deleted and ctx's error returned,
// wrapped), or the election is closed (curator.ErrClosed). It rides out
// connection loss and session expiry while waiting (its place in line is
// kept while its session lives). It returns the leader context: cancelled
// the moment leadership can no longer be relied on (see Election); it
// carries ctx's values, not its deadline. Called while leading, it returns
// the current term's context; called while another Campaign waits, it
// fails with curator.ErrBusy. A ctx that ends while our node's create is
// in flight is heard once the create is answered (at most
// recipe clean-up's 5 s, with a server that does not answer; at once while
// the client has never connected: nothing can have been made), so that a
// node made is deleted before Campaign returns, never after.
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

// Close leaves the election: a waiting Campaign fails with curator.ErrClosed,
// the term (if any) ends, our node is deleted, observers' channels close;
// it returns once every goroutine of the election has ended. Later calls
// fail with curator.ErrClosed. Idempotent.
func (el *Election) Close() error { return el.e.close(CloseSilent) }

func (el *Election) String() string {
	return fmt.Sprintf("leader.Election(%s, %q)", el.e.path, el.e.id)
}
