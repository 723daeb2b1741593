package shared

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// VersionedValue is a value with the node version and the zxid of the
// write it was read at (Curator's VersionedValue): what TrySetValue and
// TrySetCount compare. Before Start, Version and Zxid are -1.
type VersionedValue[T any] struct {
	Version int32 // the node's version (Stat.Version)
	Zxid    int64 // the zxid of the write (Stat.Mzxid): Curator 5.7's getZxid
	Value   T
}

// Value is Curator's SharedValue: bytes shared through one persistent
// node, watched, so that Value is current and listeners hear of every
// change. Start it before use and Close it after: the one goroutine that
// watches the node, and the one that calls the listeners, stop on Close.
// The node is not deleted by Close.
//
// As in Curator 5.7 (CURATOR-688), the local value follows the node by
// the zxid of its last write (Stat.Mzxid), not by its version, so it
// keeps following a node deleted and made again, and TrySetValue compares
// that zxid first. Unlike Curator:
//   - a node deleted by someone is watched for its re-creation (Curator's
//     watch goes deaf: getData on a missing node sets none);
//   - listeners hear of real changes only (a new write, or a re-created
//     node), not of every reconnection (CURATOR-311's events), nor of
//     connection states: use framework.WithListener for those;
//   - before Start, Value returns nil (Curator: the seed).
//
// All methods are safe for concurrent use.
type Value struct {
	client *framework.Client
	path   string
	seed   []byte
	check  func([]byte) error // refuses data not in the format (Count's)
	what   string             // "shared value", "shared count": for errors

	mu        sync.Mutex
	value     VersionedValue[[]byte]
	changed   chan struct{}
	started   bool
	closed    bool
	cancel    context.CancelFunc
	done      chan struct{} // closed when the goroutines end; nil if none
	listeners recipe.Listeners[VersionedValue[[]byte]]
}

// NewValue returns a shared value at path, made with seed (copied) by
// Start if the node does not exist (SharedValue(client, path, seedValue)).
// It does no I/O; a nil client or an invalid path is an error wrapping
// curator.ErrInvalidArgument.
func NewValue(client *framework.Client, path string, seed []byte) (*Value, error) {
	return newValue(client, path, seed, "shared value", nil)
}

func newValue(client *framework.Client, path string, seed []byte, what string, check func([]byte) error) (*Value, error) {
	if err := recipe.CheckArgs(client, what, path); err != nil {
		return nil, fmt.Errorf("shared: %w", err)
	}
	return &Value{client: client, path: path, seed: bytes.Clone(seed), check: check, what: what,
		value:   VersionedValue[[]byte]{Version: -1, Zxid: -1},
		changed: make(chan struct{})}, nil
}

// Path returns the node's path.
func (v *Value) Path() string { return v.path }

// Start makes the node with the seed if it does not exist (its parents as
// containers), reads it and begins watching it (Curator's start). It
// returns once the first value is read; if it fails it can be called
// again. A second Start is curator.ErrBusy, after Close curator.ErrClosed.
func (v *Value) Start(ctx context.Context) (err error) {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return fmt.Errorf("shared: %s %s: %w", v.what, v.path, curator.ErrClosed)
	}
	if v.started {
		v.mu.Unlock()
		return fmt.Errorf("shared: %s %s already started: %w", v.what, v.path, curator.ErrBusy)
	}
	v.started = true
	v.mu.Unlock()
	defer func() {
		if err != nil {
			v.mu.Lock()
			v.started = false
			v.mu.Unlock()
		}
	}()
	_, err = v.client.Create(ctx, v.path, v.seed, framework.WithParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	data, st, w, err := v.client.GetW(ctx, v.path)
	if err != nil {
		return err
	}
	if err := v.publish(data, st); err != nil {
		w.Stop()
		return err
	}
	if startHook != nil {
		startHook(v)
	}
	wctx, cancel := context.WithCancel(context.Background())
	v.mu.Lock()
	if v.closed { // Close came while we read: do not start watching
		v.mu.Unlock()
		cancel()
		w.Stop()
		return fmt.Errorf("shared: %s %s closed while starting: %w", v.what, v.path, curator.ErrClosed)
	}
	v.cancel, v.done = cancel, make(chan struct{})
	changed := v.changed
	v.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); v.watch(wctx, w) }()
	go func() { defer wg.Done(); v.deliver(wctx, changed) }()
	go func() { wg.Wait(); close(v.done) }()
	return nil
}

// startHook, if set (tests), runs in Start before the watch starts.
var startHook func(*Value)

// publish records a value read or written at st, unless a newer one is
// known already, and tells waiters when it changed.
func (v *Value) publish(data []byte, st *framework.Stat) error {
	if v.check != nil {
		if err := v.check(data); err != nil {
			return fmt.Errorf("shared: %s %s: %w", v.what, v.path, err)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if st.Mzxid <= v.value.Zxid {
		return nil // known already, or older (CURATOR-688: by zxid, not version)
	}
	v.value = VersionedValue[[]byte]{Version: st.Version, Zxid: st.Mzxid, Value: bytes.Clone(data)}
	close(v.changed)
	v.changed = make(chan struct{})
	return nil
}

// watch waits on the node's watch and re-reads it (re-arming the watch)
// after every event, until ctx ends or the client closes.
func (v *Value) watch(ctx context.Context, w *framework.Watch) {
	for {
		select {
		case <-ctx.Done():
			w.Stop()
			return
		case <-w.C():
		}
		if w = v.rearm(ctx); w == nil {
			return
		}
	}
}

// rearm reads the node with a data watch, or, if it is gone, sets an
// exists watch for its re-creation (Curator's getData on a missing node
// sets none, and its SharedValue stops following the node). It returns
// nil when ctx ends or the client closes.
func (v *Value) rearm(ctx context.Context) *framework.Watch {
	for {
		data, st, w, err := v.client.GetW(ctx, v.path)
		if err == nil {
			if err := v.publish(data, st); err != nil {
				v.client.Logger().Warn("shared: ignoring a value not in its format", "path", v.path, "err", err)
			}
			return w
		}
		if errors.Is(err, zk.ErrNoNode) {
			var ok bool
			if ok, _, w, err = v.client.ExistsW(ctx, v.path); err == nil {
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
		v.client.Logger().Warn("shared: re-reading", "path", v.path, "err", err)
		t := time.NewTimer(retryPause) // the retry loop already waited; do not spin
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-v.client.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

const retryPause = 200 * time.Millisecond

// deliver calls the listeners after each change, with the value as it is
// then: changes that come while listeners run coalesce into one call.
func (v *Value) deliver(ctx context.Context, changed <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		v.mu.Lock()
		cur := v.value
		changed = v.changed
		v.mu.Unlock()
		fns := v.listeners.Snapshot()
		for _, fn := range fns {
			if ctx.Err() != nil {
				return
			}
			cur.Value = bytes.Clone(cur.Value)
			fn(cur)
		}
	}
}

// Value returns the current value (Curator's getValue): a copy, never a
// ZooKeeper read; nil before Start.
func (v *Value) Value() []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	return bytes.Clone(v.value.Value)
}

// VersionedValue returns the current value with its version and zxid
// (Curator's getVersionedValue), for TrySetValue.
func (v *Value) VersionedValue() VersionedValue[[]byte] {
	v.mu.Lock()
	defer v.mu.Unlock()
	cur := v.value
	cur.Value = bytes.Clone(cur.Value)
	return cur
}

// Changed returns a channel closed at the next change of the value (the
// value is current when it is closed): call it again after each change.
func (v *Value) Changed() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

// AddListener adds fn (Curator's SharedValueListener.valueHasChanged),
// called after each change from Start's first read on, on the value's
// one delivery goroutine, with the value as it is then (changes that come
// while a listener runs coalesce: fn sees the latest). remove removes it.
// fn must not call Close. A nil fn is ignored.
func (v *Value) AddListener(fn func(VersionedValue[[]byte])) (remove func()) {
	return v.listeners.Add(fn)
}

// SetValue sets the value unconditionally (Curator's setValue); Value
// returns it (or a newer one) as soon as SetValue has. A node deleted by
// someone is zk.ErrNoNode, as in Curator. After Close it fails with an
// error wrapping curator.ErrClosed and writes nothing.
func (v *Value) SetValue(ctx context.Context, data []byte) error {
	if err := v.open(); err != nil {
		return err
	}
	if v.check != nil {
		if err := v.check(data); err != nil {
			return fmt.Errorf("shared: %w: %w", curator.ErrInvalidArgument, err)
		}
	}
	st, err := v.client.Set(ctx, v.path, data)
	if err != nil {
		return err
	}
	return v.publish(data, st)
}

// TrySetValue sets the value only if it is still prev (Curator 5.7's
// trySetValue): false, with no ZooKeeper call, if the local value is
// already another (by its zxid and bytes); else a write conditional on
// prev's version, false if someone wrote first (Value shows the newer
// value once the watch has read it); a node deleted by someone is
// zk.ErrNoNode. A prev not read from a started value
// (Version -1) is curator.ErrInvalidArgument (Curator's
// IllegalTrySetVersionException). After Close it fails with an error
// wrapping curator.ErrClosed and writes nothing.
func (v *Value) TrySetValue(ctx context.Context, prev VersionedValue[[]byte], data []byte) (bool, error) {
	if err := v.open(); err != nil {
		return false, err
	}
	if v.check != nil {
		if err := v.check(data); err != nil {
			return false, fmt.Errorf("shared: %w: %w", curator.ErrInvalidArgument, err)
		}
	}
	v.mu.Lock()
	cur := v.value
	v.mu.Unlock()
	if prev.Zxid != cur.Zxid || !bytes.Equal(prev.Value, cur.Value) {
		return false, nil
	}
	if prev.Version < 0 {
		return false, fmt.Errorf("shared: %w: version %d: a value read before Start", curator.ErrInvalidArgument, prev.Version)
	}
	st, err := v.client.Set(ctx, v.path, data, framework.WithVersion(prev.Version))
	if errors.Is(err, zk.ErrBadVersion) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, v.publish(data, st)
}

// open returns an error wrapping curator.ErrClosed once Close was called.
func (v *Value) open() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return fmt.Errorf("shared: %s %s: %w", v.what, v.path, curator.ErrClosed)
	}
	return nil
}

// Close stops watching and waits for the value's goroutines to end. It is
// safe to call at any time, from several goroutines and more than once
// (each call returns once the goroutines have ended); a Start under way
// when Close is called fails, and the value cannot be started again. Not
// from a listener.
func (v *Value) Close() error {
	v.mu.Lock()
	cancel, done := v.cancel, v.done
	v.closed = true
	v.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}
