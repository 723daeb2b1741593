package atomic

import (
	"context"
	"fmt"
	"math"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/recipe"
)

// CachedLong is Curator's CachedAtomicLong: numbers handed out from a
// range reserved on a Long, cacheFactor at a time, so that one
// compare-and-set serves cacheFactor calls of Next. Each number is handed
// out once among every process sharing the counter (a range, once
// reserved by an Add, is this object's alone); here they come in
// increasing order, across processes they interleave by range, and the
// rest of a range is skipped when its object is dropped. An ID
// generator, not a count: the counter says how many numbers were
// reserved, not how many were used. Unique only while the counter never
// moves back: after a reset (ForceSet lower, the node made again) numbers
// may be handed out twice, as with Curator's.
type CachedLong struct{ cached[int64] }

// CachedInt is Curator's CachedAtomicInteger: CachedLong on an Int.
type CachedInt struct{ cached[int32] }

// NewCachedLong returns numbers from l, reserving cacheFactor at a time
// (CachedAtomicLong(number, cacheFactor)). A nil l or a cacheFactor below
// 1 is an error wrapping curator.ErrInvalidArgument.
func NewCachedLong(l *Long, cacheFactor int) (*CachedLong, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil Long", curator.ErrInvalidArgument)
	}
	c, err := newCached(&l.number, cacheFactor)
	if err != nil {
		return nil, err
	}
	return &CachedLong{c}, nil
}

// NewCachedInt returns numbers from i (CachedAtomicInteger); see
// NewCachedLong. cacheFactor must also fit an int32.
func NewCachedInt(i *Int, cacheFactor int) (*CachedInt, error) {
	if i == nil {
		return nil, fmt.Errorf("%w: nil Int", curator.ErrInvalidArgument)
	}
	if cacheFactor > math.MaxInt32 {
		return nil, fmt.Errorf("%w: cache factor %d does not fit an int32", curator.ErrInvalidArgument, cacheFactor)
	}
	c, err := newCached(&i.number, cacheFactor)
	if err != nil {
		return nil, err
	}
	return &CachedInt{c}, nil
}

// cached hands out the numbers of one reserved range at a time.
type cached[T int32 | int64] struct {
	n      *number[T]
	factor T
	turn   chan struct{} // one Next at a time (a ctx-aware mutex)
	have   bool          // a range is reserved and not used up
	first  T             // the range's first number
	index  T             // numbers of the range handed out
}

func newCached[T int32 | int64](n *number[T], cacheFactor int) (cached[T], error) {
	if cacheFactor < 1 {
		return cached[T]{}, fmt.Errorf("%w: cache factor %d, want at least 1", curator.ErrInvalidArgument, cacheFactor)
	}
	return cached[T]{n: n, factor: T(cacheFactor), turn: make(chan struct{}, 1)}, nil
}

// Next hands out the next number (Curator's next): PreValue is the
// number, PostValue the number plus 1. When the range is used up it
// reserves the next one with Add(cacheFactor) (the Result's Stats are
// that Add's); if that fails, Next returns its error and hands out
// nothing. A reservation that may have been applied (an error wrapping
// curator.ErrConnectionLoss) is not used: its numbers are skipped, never
// handed out twice. Safe for concurrent use: calls take turns.
func (c *cached[T]) Next(ctx context.Context) (Result[T], error) {
	if ctx == nil {
		return Result[T]{}, recipe.ErrNilContext
	}
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return Result[T]{}, fmt.Errorf("atomic: %s: %w", c.n.v.path, ctx.Err())
	}
	defer func() { <-c.turn }()
	// A decision on local knowledge: numbers of a range reserved earlier
	// are handed out without asking the server. Relies on: the counter
	// only moving forward, by Adds, so no one else reserves this range.
	// Broken by: the counter moved back (ForceSet or TrySet to a lower
	// value, the node deleted and made again, an operator's reset); then
	// a later reservation of a process may cover numbers this range has
	// still to hand out, as in Curator's CachedAtomicLong. Attacked by:
	// TestCachedRangeOutlivesAReset (the range goes on after a reset;
	// the next reservation reads the reset value).
	var res Result[T]
	if !c.have {
		r, err := c.n.Add(ctx, c.factor)
		if err != nil {
			return Result[T]{Stats: r.Stats}, err
		}
		c.have, c.first, c.index = true, r.PreValue, 0
		res.Stats = r.Stats
	}
	x := c.first + c.index
	if c.index++; c.index == c.factor {
		c.have = false
	}
	res.Succeeded, res.PreValue, res.PostValue = true, x, x+1
	return res, nil
}
