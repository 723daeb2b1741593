package semaphore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/recipe"
)

// SharedCount is Curator's SharedCount: an int shared through one node (4
// bytes, big-endian, Curator's format), watched so that Count is current and
// Changed tells of every change. Start it before use and Close it after: the
// one goroutine it runs (re-arming a data watch on the node after each
// change, and after a lost session) stops on Close. If the node is deleted,
// Count keeps the last value and the node's re-creation is watched for.
type SharedCount struct {
	client *framework.Client
	path   string
	seed   int

	mu      sync.Mutex
	value   VersionedValue
	mzxid   int64 // of the value: orders reads and our own writes
	changed chan struct{}
	started bool
	closed  bool
	cancel  context.CancelFunc
	done    chan struct{} // closed when the watching goroutine ends; nil if none
}

// VersionedValue is a count with the node version it was read at (for
// TrySetCount; Curator's VersionedValue<Integer>).
type VersionedValue struct {
	Version int32
	Value   int
}

// NewSharedCount returns a shared count at path, created with seed by Start
// if it does not exist (SharedCount(client, path, seedValue)).
func NewSharedCount(client *framework.Client, path string, seed int) (*SharedCount, error) {
	if err := recipe.CheckArgs(client, "count", path); err != nil {
		return nil, fmt.Errorf("semaphore: %w", err)
	}
	if err := checkCount(seed); err != nil {
		return nil, err
	}
	return &SharedCount{client: client, path: path, seed: seed, changed: make(chan struct{})}, nil
}

// checkCount refuses a value Curator's format cannot hold (an int32): it
// would be stored truncated, and everyone would agree on the wrong count.
func checkCount(n int) error {
	if n < math.MinInt32 || n > math.MaxInt32 {
		return fmt.Errorf("semaphore: %w: shared count %d out of the 32-bit range of Curator's format", curator.ErrInvalidArgument, n)
	}
	return nil
}

// encodeCount is Curator's SharedCount format: 4 bytes, big-endian.
func encodeCount(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(int32(n))) }

// decodeCount reads Curator's SharedCount format.
func decodeCount(b []byte) (int, error) {
	if len(b) != layout.SharedCountLen {
		return 0, fmt.Errorf("semaphore: %w: shared count data has %d bytes, want %d", curator.ErrInvalidArgument, len(b), layout.SharedCountLen)
	}
	return int(int32(binary.BigEndian.Uint32(b))), nil
}

// Path returns the count's node path.
func (sc *SharedCount) Path() string { return sc.path }

// Start creates the node with the seed if it does not exist (parents as
// containers), reads it and begins watching it. It returns once the first
// value is read; if it fails it can be called again.
func (sc *SharedCount) Start(ctx context.Context) (err error) {
	sc.mu.Lock()
	if sc.closed {
		sc.mu.Unlock()
		return fmt.Errorf("semaphore: shared count %s: %w", sc.path, curator.ErrClosed)
	}
	if sc.started {
		sc.mu.Unlock()
		return fmt.Errorf("semaphore: shared count %s already started: %w", sc.path, curator.ErrBusy)
	}
	sc.started = true
	sc.mu.Unlock()
	defer func() {
		if err != nil {
			sc.mu.Lock()
			sc.started = false
			sc.mu.Unlock()
		}
	}()
	_, err = sc.client.Create(ctx, sc.path, encodeCount(sc.seed), framework.WithParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	data, st, w, err := sc.client.GetW(ctx, sc.path)
	if err != nil {
		return err
	}
	if err := sc.publish(data, st); err != nil {
		w.Stop()
		return err
	}
	if startHook != nil {
		startHook(sc)
	}
	wctx, cancel := context.WithCancel(context.Background())
	sc.mu.Lock()
	if sc.closed { // Close came while we read: do not start watching
		sc.mu.Unlock()
		cancel()
		w.Stop()
		return fmt.Errorf("semaphore: shared count %s closed while starting: %w", sc.path, curator.ErrClosed)
	}
	sc.cancel, sc.done = cancel, make(chan struct{})
	sc.mu.Unlock()
	go sc.watch(wctx, w)
	return nil
}

// startHook, if set (tests), runs in Start before the watch starts.
var startHook func(*SharedCount)

// publish records a value read or written at st, unless a newer one is
// known already, and tells waiters when it changed.
func (sc *SharedCount) publish(data []byte, st *framework.Stat) error {
	n, err := decodeCount(data)
	if err != nil {
		return fmt.Errorf("shared count %s: %w", sc.path, err)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if st.Mzxid < sc.mzxid {
		return nil
	}
	sc.mzxid = st.Mzxid
	if st.Version != sc.value.Version || n != sc.value.Value {
		sc.value = VersionedValue{Version: st.Version, Value: n}
		close(sc.changed)
		sc.changed = make(chan struct{})
	}
	return nil
}

// watch waits on the node's watch and re-reads it (re-arming the watch)
// after every event, until ctx ends or the client closes.
func (sc *SharedCount) watch(ctx context.Context, w *framework.Watch) {
	defer close(sc.done)
	for {
		select {
		case <-ctx.Done():
			w.Stop()
			return
		case <-w.C():
		}
		if w = sc.rearm(ctx); w == nil {
			return
		}
	}
}

// rearm reads the node with a data watch, or, if it is gone, sets an exists
// watch for its re-creation. It returns nil when ctx ends or the client
// closes.
func (sc *SharedCount) rearm(ctx context.Context) *framework.Watch {
	for {
		data, st, w, err := sc.client.GetW(ctx, sc.path)
		if err == nil {
			if err := sc.publish(data, st); err != nil {
				sc.client.Logger().Warn("shared count: ignoring a value not in Curator's format", "path", sc.path, "err", err)
			}
			return w
		}
		if errors.Is(err, zk.ErrNoNode) {
			var ok bool
			if ok, _, w, err = sc.client.ExistsW(ctx, sc.path); err == nil {
				if !ok {
					return w // its creation fires the watch
				}
				w.Stop()
				continue // created meanwhile
			}
		}
		if ctx.Err() != nil || errors.Is(err, curator.ErrClosed) {
			return nil
		}
		sc.client.Logger().Warn("shared count: re-reading", "path", sc.path, "err", err)
		t := time.NewTimer(retryPause) // the retry loop already waited; do not spin
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-sc.client.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

const retryPause = 200 * time.Millisecond

// Count returns the current value (Curator's getCount); 0 before Start.
func (sc *SharedCount) Count() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.value.Value
}

// VersionedValue returns the current value with its version (Curator's
// getVersionedValue).
func (sc *SharedCount) VersionedValue() VersionedValue {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.value
}

// Changed returns a channel closed at the next change of the value (the Go
// form of Curator's SharedCountListener.countHasChanged).
func (sc *SharedCount) Changed() <-chan struct{} {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.changed
}

// SetCount sets the value unconditionally (Curator's setCount); Count
// returns it as soon as SetCount has. After Close it fails with an error
// wrapping curator.ErrClosed and writes nothing; so does a value out of
// the int32 range (curator.ErrInvalidArgument).
func (sc *SharedCount) SetCount(ctx context.Context, n int) error {
	if err := sc.open(); err != nil {
		return err
	}
	if err := checkCount(n); err != nil {
		return err
	}
	data := encodeCount(n)
	st, err := sc.client.Set(ctx, sc.path, data)
	if err != nil {
		return err
	}
	return sc.publish(data, st)
}

// TrySetCount sets the value only if the node is still at prev's version
// (Curator's trySetCount); false means someone changed it first, and Count
// shows the newer value once the watch has read it. After Close it fails
// with an error wrapping curator.ErrClosed and writes nothing; so does a
// value out of the int32 range (curator.ErrInvalidArgument).
func (sc *SharedCount) TrySetCount(ctx context.Context, prev VersionedValue, n int) (bool, error) {
	if err := sc.open(); err != nil {
		return false, err
	}
	if err := checkCount(n); err != nil {
		return false, err
	}
	data := encodeCount(n)
	st, err := sc.client.Set(ctx, sc.path, data, framework.WithVersion(prev.Version))
	if errors.Is(err, zk.ErrBadVersion) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, sc.publish(data, st)
}

// open returns an error wrapping curator.ErrClosed once Close was called.
func (sc *SharedCount) open() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.closed {
		return fmt.Errorf("semaphore: shared count %s: %w", sc.path, curator.ErrClosed)
	}
	return nil
}

// Close stops watching and waits for the watching goroutine to end. It is
// safe to call at any time, from several goroutines and more than once
// (each call returns once the goroutine has ended); a Start under way when
// Close is called fails, and the count cannot be started again.
func (sc *SharedCount) Close() error {
	sc.mu.Lock()
	cancel, done := sc.cancel, sc.done
	sc.closed = true
	sc.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}
