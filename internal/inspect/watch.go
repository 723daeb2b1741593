package inspect

import (
	"context"
	"time"
)

// DefaultCoalesce is how long Watch lets a burst of changes settle.
const DefaultCoalesce = 100 * time.Millisecond

// defaultRetryDelay is the pause after a failed read.
const defaultRetryDelay = time.Second

// WatchOptions configure Watch.
type WatchOptions struct {
	Options
	// Timeout bounds each read (0: none but ctx).
	Timeout time.Duration
	// Coalesce: after the first change of a burst Watch waits this long
	// before it reads again, so that the whole burst costs one read
	// (0: DefaultCoalesce).
	Coalesce time.Duration
	// RetryDelay is the pause after a failed read, once connected (0: 1 s).
	RetryDelay time.Duration
}

// Watch reads path and calls draw with what it found, then again each time
// ZooKeeper tells of a change, until ctx ends (Watch returns nil) or draw
// returns an error (Watch returns it). Changes are seen through watches,
// never by polling: a child watch on every persistent node read (set by the
// same request that read its children) and an exists watch on path itself.
// A burst of changes costs one read: after the first event Watch waits
// Coalesce, then reads once; the events of the burst need nothing more.
// When path does not exist, draw gets a Snapshot with Missing set, and
// Watch waits for the path to be created. A failed read is given to draw
// with a nil Snapshot: if draw returns nil, Watch reads again once the
// client is connected, after RetryDelay.
func Watch(ctx context.Context, src WatchSource, path string, o WatchOptions, draw func(*Snapshot, error) error) error {
	if o.Coalesce <= 0 {
		o.Coalesce = DefaultCoalesce
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = defaultRetryDelay
	}
	for {
		snap, ws, err := watchRead(ctx, src, path, o)
		if ctx.Err() != nil {
			stopAll(ws)
			return nil
		}
		if err != nil {
			if derr := draw(nil, err); derr != nil {
				return derr
			}
			if err := pause(ctx, src, o.RetryDelay); err != nil {
				return err
			}
			continue
		}
		if derr := draw(snap, nil); derr != nil {
			stopAll(ws)
			return derr
		}
		waitChange(ctx, ws, o.Coalesce)
		stopAll(ws)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// watchRead takes a snapshot with watches set; a missing path gives a
// Missing snapshot and a watch for its creation.
func watchRead(ctx context.Context, src WatchSource, path string, o WatchOptions) (*Snapshot, []Watcher, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	for {
		// The exists watch first: a change of path between it and the
		// read is then seen (at worst one read too many).
		ok, _, w, err := src.ExistsW(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return &Snapshot{Path: path, Time: time.Now().UTC(), Missing: true, Recipes: []Recipe{}}, []Watcher{w}, nil
		}
		root, truncated, ws, err := read(ctx, src, src, path, o.Options)
		if IsNotFound(err) {
			w.Stop()
			continue // deleted in between: wait for its creation
		}
		if err != nil {
			w.Stop()
			return nil, nil, err
		}
		return snapshot(path, root, truncated), append(ws, w), nil
	}
}

// waitChange returns once one of ws has fired and Coalesce has passed
// since, or ctx is done.
func waitChange(ctx context.Context, ws []Watcher, coalesce time.Duration) {
	fired := make(chan struct{}, 1)
	done := make(chan struct{})
	defer close(done)
	for _, w := range ws {
		go func() {
			select {
			case <-w.C():
				select {
				case fired <- struct{}{}:
				default:
				}
			case <-done:
			}
		}()
	}
	select {
	case <-ctx.Done():
		return
	case <-fired:
	}
	t := time.NewTimer(coalesce)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// pause waits until the client is connected and then d; it fails only when
// the client is closed.
func pause(ctx context.Context, src WatchSource, d time.Duration) error {
	if err := src.BlockUntilConnected(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return nil
}

func stopAll(ws []Watcher) {
	for _, w := range ws {
		w.Stop()
	}
}
