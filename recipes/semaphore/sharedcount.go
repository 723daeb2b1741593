package semaphore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// SharedCount is Curator's SharedCount: an int shared through one node (4
// bytes, big-endian, Curator's format), watched so that Count is current and
// Changed tells of every change. Start it before use and Close it after.
type SharedCount struct {
	client *framework.Client
	path   string
	seed   int

	mu      sync.Mutex
	value   VersionedValue
	changed chan struct{}
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// VersionedValue is a count with the node version it was read at (for
// TrySetCount).
type VersionedValue struct {
	Version int32
	Value   int
}

// NewSharedCount returns a shared count at path, created with seed by Start
// if it does not exist.
func NewSharedCount(client *framework.Client, path string, seed int) (*SharedCount, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil || path == "/" {
		return nil, fmt.Errorf("%w: path %q: %v", ErrInvalidArgument, path, err)
	}
	return &SharedCount{client: client, path: path, seed: seed, changed: make(chan struct{})}, nil
}

// EncodeCount is Curator's SharedCount format: 4 bytes, big-endian.
func EncodeCount(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(int32(n))) }

// DecodeCount reads Curator's SharedCount format.
func DecodeCount(b []byte) (int, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("%w: shared count data has %d bytes, want 4", ErrInvalidArgument, len(b))
	}
	return int(int32(binary.BigEndian.Uint32(b))), nil
}

// Start creates the node if needed and begins watching it. It returns once
// the first value is read.
func (sc *SharedCount) Start(ctx context.Context) error {
	sc.mu.Lock()
	if sc.started {
		sc.mu.Unlock()
		return fmt.Errorf("%w: shared count %s already started", ErrInvalidArgument, sc.path)
	}
	sc.started = true
	sc.mu.Unlock()
	_, err := sc.client.Create(ctx, sc.path, EncodeCount(sc.seed), framework.WithParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	w, err := sc.read(ctx)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(context.Background())
	sc.mu.Lock()
	sc.cancel, sc.done = cancel, make(chan struct{})
	sc.mu.Unlock()
	go sc.watch(wctx, w)
	return nil
}

// read reads the node with a watch and publishes the value.
func (sc *SharedCount) read(ctx context.Context) (*framework.Watch, error) {
	data, st, w, err := sc.client.GetW(ctx, sc.path)
	if err != nil {
		return nil, err
	}
	n, err := DecodeCount(data)
	if err != nil {
		w.Stop()
		return nil, err
	}
	sc.mu.Lock()
	if st.Version != sc.value.Version || n != sc.value.Value {
		sc.value = VersionedValue{st.Version, n}
		close(sc.changed)
		sc.changed = make(chan struct{})
	}
	sc.mu.Unlock()
	return w, nil
}

func (sc *SharedCount) watch(ctx context.Context, w *framework.Watch) {
	defer close(sc.done)
	for {
		select {
		case <-ctx.Done():
			w.Stop()
			return
		case <-w.C():
		}
		for {
			var err error
			if w, err = sc.read(ctx); err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			sc.client.Logger().Warn("shared count: re-reading", "path", sc.path, "err", err)
			select { // the retry loop already waited; do not spin on a gone node
			case <-ctx.Done():
				return
			case <-sc.client.Done():
				return
			case <-afterRetryPause():
			}
		}
	}
}

// Count returns the current value.
func (sc *SharedCount) Count() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.value.Value
}

// VersionedValue returns the current value with its version.
func (sc *SharedCount) VersionedValue() VersionedValue {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.value
}

// Changed returns a channel closed at the next change of the value.
func (sc *SharedCount) Changed() <-chan struct{} {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.changed
}

// SetCount sets the value unconditionally.
func (sc *SharedCount) SetCount(ctx context.Context, n int) error {
	_, err := sc.client.Set(ctx, sc.path, EncodeCount(n), -1)
	return err
}

// TrySetCount sets the value only if it is still at prev's version; false
// means someone changed it first.
func (sc *SharedCount) TrySetCount(ctx context.Context, prev VersionedValue, n int) (bool, error) {
	_, err := sc.client.Set(ctx, sc.path, EncodeCount(n), prev.Version)
	if errors.Is(err, zk.ErrBadVersion) {
		return false, nil
	}
	return err == nil, err
}

// Close stops watching. It is idempotent.
func (sc *SharedCount) Close() error {
	sc.mu.Lock()
	cancel, done := sc.cancel, sc.done
	sc.cancel = nil
	sc.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

// afterRetryPause paces re-reads after an error that the retry loop already
// retried.
func afterRetryPause() <-chan time.Time { return time.After(200 * time.Millisecond) }
