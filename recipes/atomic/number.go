package atomic

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// Long is Curator's DistributedAtomicLong: an int64 counter in one node,
// 8 bytes big-endian (Java's ByteBuffer.putLong), so Java and Go
// increments of one counter add up exactly. It is a Value underneath:
// see Value for how conflicts, the lock and lost replies are handled. A
// missing node, or one with no data, reads as 0; data shorter than 8
// bytes is an error wrapping curator.ErrCorrupt, and longer data is read
// by its first 8 bytes (as Curator). Arithmetic wraps silently, as
// Java's.
type Long struct{ number[int64] }

// Int is Curator's DistributedAtomicInteger: Long with an int32 in 4
// bytes, big-endian.
type Int struct{ number[int32] }

// NewLong returns the counter at path (DistributedAtomicLong(client,
// counterPath, retryPolicy[, promotedToLock])). It does no I/O; a nil
// client, an invalid path or a bad option is an error wrapping
// curator.ErrInvalidArgument.
func NewLong(client *framework.Client, path string, opts ...Option) (*Long, error) {
	v, err := NewValue(client, path, opts...)
	if err != nil {
		return nil, err
	}
	return &Long{number[int64]{v: v, width: 8}}, nil
}

// NewInt returns the counter at path (DistributedAtomicInteger); see
// NewLong.
func NewInt(client *framework.Client, path string, opts ...Option) (*Int, error) {
	v, err := NewValue(client, path, opts...)
	if err != nil {
		return nil, err
	}
	return &Int{number[int32]{v: v, width: 4}}, nil
}

// number is a counter of T in width bytes, big-endian, on a Value.
type number[T int32 | int64] struct {
	v     *Value
	width int
}

func (n *number[T]) encode(x T) []byte {
	if n.width == 4 {
		return binary.BigEndian.AppendUint32(nil, uint32(int32(x)))
	}
	return binary.BigEndian.AppendUint64(nil, uint64(int64(x)))
}

// decode is Curator's bytesToValue: nil or empty is 0, fewer than width
// bytes is corrupt (Curator's "Corrupted data for node"), more are
// ignored.
func (n *number[T]) decode(b []byte) (T, error) {
	switch {
	case len(b) == 0:
		return 0, nil
	case len(b) < n.width:
		hex := make([]string, len(b))
		for i, c := range b {
			hex[i] = fmt.Sprintf("0x%x", c)
		}
		return 0, fmt.Errorf("atomic: %w: data for node %q: [%s] (%d bytes, want %d)",
			curator.ErrCorrupt, n.v.path, strings.Join(hex, ", "), len(b), n.width)
	case n.width == 4:
		return T(int32(binary.BigEndian.Uint32(b))), nil
	}
	return T(int64(binary.BigEndian.Uint64(b))), nil
}

// result decodes a Value's result; an error of its own (corrupt data) is
// joined to err.
func (n *number[T]) result(r Result[[]byte], err error) (Result[T], error) {
	out := Result[T]{Succeeded: r.Succeeded, Stats: r.Stats}
	pre, perr := n.decode(r.PreValue)
	post, _ := n.decode(r.PostValue) // ours: always width bytes
	out.PreValue, out.PostValue = pre, post
	if err == nil && perr != nil {
		err = perr
	}
	return out, err
}

// Path returns the counter's node path.
func (n *number[T]) Path() string { return n.v.path }

// Get reads the counter (Curator's get): 0 for a missing node.
func (n *number[T]) Get(ctx context.Context) (Result[T], error) {
	return n.result(n.v.Get(ctx))
}

// Increment adds 1 (Curator's increment): see Add.
func (n *number[T]) Increment(ctx context.Context) (Result[T], error) { return n.Add(ctx, 1) }

// Decrement subtracts 1 (Curator's decrement): see Add.
func (n *number[T]) Decrement(ctx context.Context) (Result[T], error) { return n.Add(ctx, -1) }

// Subtract subtracts delta (Curator's subtract, which adds -delta: the
// smallest value wraps to itself): see Add.
func (n *number[T]) Subtract(ctx context.Context, delta T) (Result[T], error) {
	return n.Add(ctx, -delta)
}

// Add adds delta by compare-and-set (Curator's add), making the node (at
// delta) if it is missing: PreValue is the value it added to, PostValue
// the sum written. Not applied: an error wrapping curator.ErrContention
// when every try lost to other writers, curator.ErrCorrupt when the node
// does not hold a counter; an error wrapping curator.ErrConnectionLoss
// when the write may have been applied (see Value).
func (n *number[T]) Add(ctx context.Context, delta T) (Result[T], error) {
	return n.result(n.v.update(ctx, func(prev []byte) ([]byte, error) {
		x, err := n.decode(prev)
		if err != nil {
			return nil, err
		}
		return n.encode(x + delta), nil
	}))
}

// TrySet sets the counter to x by compare-and-set (Curator's trySet): see
// Add and Value.TrySet.
func (n *number[T]) TrySet(ctx context.Context, x T) (Result[T], error) {
	return n.result(n.v.TrySet(ctx, n.encode(x)))
}

// CompareAndSet sets the counter to x if it holds expected now (Curator's
// compareAndSet; one try): see Value.CompareAndSet. As in Curator, the
// node's bytes are compared: a missing node, or one with no data, is not
// 0 here.
func (n *number[T]) CompareAndSet(ctx context.Context, expected, x T) (Result[T], error) {
	return n.result(n.v.CompareAndSet(ctx, n.encode(expected), n.encode(x)))
}

// ForceSet sets the counter to x whatever it holds (Curator's forceSet).
func (n *number[T]) ForceSet(ctx context.Context, x T) error { return n.v.ForceSet(ctx, n.encode(x)) }

// Initialize sets the counter to x only if the node does not exist
// (Curator's initialize): true if this call made it.
func (n *number[T]) Initialize(ctx context.Context, x T) (bool, error) {
	return n.v.Initialize(ctx, n.encode(x))
}
