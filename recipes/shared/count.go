package shared

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
)

// Count is Curator's SharedCount: an int shared through one node, in
// Curator's format (4 bytes, big-endian two's complement), so Java and Go
// processes share it; a Value underneath. Start it before use and Close
// it after. Data not in the format (written by something else) is
// ignored with a warning: Count keeps the last good value (Curator's
// getCount throws). recipes/semaphore.NewWithSharedCount takes one as a
// semaphore's maximum (Curator's SharedCountReader).
//
// All methods are safe for concurrent use.
type Count struct {
	v *Value
}

// NewCount returns a shared count at path, made with seed by Start if the
// node does not exist (SharedCount(client, path, seedValue)). It does no
// I/O; a nil client, an invalid path or a seed out of the int32 range is
// an error wrapping curator.ErrInvalidArgument.
func NewCount(client *framework.Client, path string, seed int) (*Count, error) {
	if err := checkCount(seed); err != nil {
		return nil, err
	}
	v, err := newValue(client, path, EncodeCount(seed), "shared count", checkData)
	if err != nil {
		return nil, err
	}
	return &Count{v: v}, nil
}

// checkCount refuses a value Curator's format cannot hold (an int32): it
// would be stored truncated, and everyone would agree on the wrong count.
func checkCount(n int) error {
	if n < math.MinInt32 || n > math.MaxInt32 {
		return fmt.Errorf("shared: %w: count %d out of the 32-bit range of Curator's format", curator.ErrInvalidArgument, n)
	}
	return nil
}

func checkData(b []byte) error {
	_, err := DecodeCount(b)
	return err
}

// EncodeCount is Curator's SharedCount format: n as 4 bytes, big-endian
// (ByteBuffer.putInt); n is truncated to 32 bits.
func EncodeCount(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(int32(n))) }

// DecodeCount reads Curator's SharedCount format: data of another length
// is an error wrapping curator.ErrCorrupt.
func DecodeCount(b []byte) (int, error) {
	if len(b) != layout.SharedCountLen {
		return 0, fmt.Errorf("%w: shared count data has %d bytes, want %d", curator.ErrCorrupt, len(b), layout.SharedCountLen)
	}
	return int(int32(binary.BigEndian.Uint32(b))), nil
}

// decoded is a versioned count of a versioned value already checked.
func decoded(vv VersionedValue[[]byte]) VersionedValue[int] {
	n, _ := DecodeCount(vv.Value) // 0 before Start (nil)
	return VersionedValue[int]{Version: vv.Version, Zxid: vv.Zxid, Value: n}
}

// Path returns the count's node path.
func (c *Count) Path() string { return c.v.path }

// Start makes the node with the seed if it does not exist (parents as
// containers), reads it and begins watching it. It returns once the first
// value is read; if it fails it can be called again. See Value.Start.
func (c *Count) Start(ctx context.Context) error { return c.v.Start(ctx) }

// Count returns the current value (Curator's getCount); 0 before Start.
func (c *Count) Count() int { return decoded(c.v.VersionedValue()).Value }

// VersionedValue returns the current value with its version and zxid
// (Curator's getVersionedValue), for TrySetCount.
func (c *Count) VersionedValue() VersionedValue[int] { return decoded(c.v.VersionedValue()) }

// Changed returns a channel closed at the next change of the value (the
// Go form of Curator's SharedCountListener.countHasChanged): call it again
// after each change.
func (c *Count) Changed() <-chan struct{} { return c.v.Changed() }

// AddListener adds fn, called after each change (Curator's
// SharedCountListener.countHasChanged); see Value.AddListener. remove
// removes it (Curator's removeListener, CURATOR-420).
func (c *Count) AddListener(fn func(VersionedValue[int])) (remove func()) {
	if fn == nil {
		return func() {}
	}
	return c.v.AddListener(func(vv VersionedValue[[]byte]) { fn(decoded(vv)) })
}

// SetCount sets the value unconditionally (Curator's setCount); Count
// returns it as soon as SetCount has. After Close it fails with an error
// wrapping curator.ErrClosed and writes nothing; so does a value out of
// the int32 range (curator.ErrInvalidArgument).
func (c *Count) SetCount(ctx context.Context, n int) error {
	if err := checkCount(n); err != nil {
		return err
	}
	return c.v.SetValue(ctx, EncodeCount(n))
}

// TrySetCount sets the value only if it is still prev (Curator's
// trySetCount; see Value.TrySetValue): false means someone changed it
// first, and Count shows the newer value once the watch has read it.
// After Close it fails with an error wrapping curator.ErrClosed and
// writes nothing; so does a value out of the int32 range
// (curator.ErrInvalidArgument).
func (c *Count) TrySetCount(ctx context.Context, prev VersionedValue[int], n int) (bool, error) {
	if err := checkCount(n); err != nil {
		return false, err
	}
	pb := EncodeCount(prev.Value)
	if prev.Version < 0 {
		pb = nil // read before Start: the local value's bytes are nil too
	}
	return c.v.TrySetValue(ctx, VersionedValue[[]byte]{Version: prev.Version, Zxid: prev.Zxid, Value: pb}, EncodeCount(n))
}

// Close stops watching and waits for the count's goroutines to end. It is
// safe to call at any time, more than once; see Value.Close.
func (c *Count) Close() error { return c.v.Close() }
