package leader

import (
	"context"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// participant is what Election, Latch and Selector share: one engine, and
// the methods that read the election or use the term, written once.
type participant struct{ e *engine }

// Observe reports the leader now and then each change it sees, including
// "nobody leads" (the zero Leader), on a channel closed when ctx is done or
// the election is closed. The first value comes at once. A change that
// comes while a value waits to be received replaces it: a slow receiver
// sees the latest leader, not every one in between.
func (p *participant) Observe(ctx context.Context) <-chan Leader { return p.e.observe(ctx) }

// Leader reads who leads now (the zero Leader if nobody), from ZooKeeper.
func (p *participant) Leader(ctx context.Context) (Leader, error) {
	if ctx == nil {
		return Leader{}, recipe.ErrNilContext
	}
	l, _, err := p.e.leader(ctx, false)
	return l, err
}

// Participants reads every participant, in line order, the leader first
// (Curator's getParticipants), from ZooKeeper.
func (p *participant) Participants(ctx context.Context) ([]Participant, error) {
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	ps, _, _, err := p.e.participants(ctx, false)
	return ps, err
}

// FencingToken returns, while leading, the creation zxid of our node: it
// strictly increases from one leader to the next, so a resource can refuse
// a stale leader. Errors: curator.ErrNotHeld when not leading,
// curator.ErrLockLost when the term was lost.
func (p *participant) FencingToken(ctx context.Context) (int64, error) {
	h, err := p.e.held()
	if err != nil {
		return 0, err
	}
	return h.FencingToken(ctx)
}

// GuardedMulti runs ops as one transaction that succeeds only while our
// node exists, so only while we lead; if it is gone the error wraps
// curator.ErrLockLost, the term ends, and nothing was written.
// curator.ErrNotHeld when not leading.
func (p *participant) GuardedMulti(ctx context.Context, ops ...framework.Op) ([]framework.OpResult, error) {
	h, err := p.e.held()
	if err != nil {
		return nil, err
	}
	return h.GuardedMulti(ctx, ops)
}

// ID returns the participant id.
func (p *participant) ID() string { return p.e.id }

// Path returns the election path.
func (p *participant) Path() string { return p.e.path }

// Node returns our node while taking part, else "".
func (p *participant) Node() string { return p.e.ourNode() }
