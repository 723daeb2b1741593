package atomic

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
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/retry"
)

// Stats are what an operation cost (Curator's AtomicStats).
type Stats struct {
	OptimisticTries int           // compare-and-set tries without the lock
	PromotedTries   int           // tries under the lock (0 unless promoted)
	OptimisticTime  time.Duration // spent in the optimistic tries
	PromotedTime    time.Duration // spent promoted: waiting for the lock and trying under it
}

// Result is the outcome of an operation (Curator's AtomicValue): whether
// it was applied, the value it read and the value it wrote, and its cost.
// A Result that did not succeed comes with an error saying why, except
// from CompareAndSet, whose false is an answer (the value was not the
// expected one).
type Result[T any] struct {
	Succeeded bool
	PreValue  T // the value read (the zero value, or nil bytes, for a missing node)
	PostValue T // the value written; the zero value unless Succeeded
	Stats     Stats
}

// Value is Curator's DistributedAtomicValue: bytes in one persistent node,
// changed only by compare-and-set on the node's version, so that
// concurrent writers never lose an update. TrySet is optimistic (read,
// then write over the version read, again after a conflict as the retry
// policy allows) and, with WithPromotedToLock, promoted to a lock once
// the optimistic tries all lost (WithoutFirstRead: its first try writes
// over the node as this object last read or wrote it, without reading
// first). Long and Int are counters on it.
//
// Unlike Curator, a write whose reply was lost (a connection loss, ctx
// ending, a session expiring) is never sent again blindly: Curator's
// retry gets BadVersion from its own earlier success, reads the value it
// wrote and adds again. Here the node is read again: a write not applied
// is tried again, and one that may have been applied (the node holds
// what it wrote, one version on) is reported as an error wrapping
// curator.ErrConnectionLoss, never as succeeded nor as not applied. So an
// operation that returns Succeeded was applied exactly once, and one that
// returns an error other than that was not applied at all.
//
// All methods are safe for concurrent use.
type Value struct {
	client      *framework.Client
	path        string
	policy      retry.Policy
	mutex       *locks.Mutex // nil: optimistic only
	lockPolicy  retry.Policy
	lockTimeout time.Duration
	noFirstRead bool // WithoutFirstRead
	met         *telemetry.Atomic

	mu   sync.Mutex
	last *seen // the node as this object last read or wrote it; nil: unknown
}

// seen is the node's data and stat as last read or written here.
type seen struct {
	data []byte
	st   framework.Stat
}

// remember keeps data and st as the node's latest known state.
func (v *Value) remember(data []byte, st *framework.Stat) {
	v.mu.Lock()
	v.last = &seen{data: bytes.Clone(data), st: *st}
	v.mu.Unlock()
}

// takeLast returns the node's last known state and forgets it, so that
// one call at a time tries it.
func (v *Value) takeLast() *seen {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.last
	v.last = nil
	return s
}

// NewValue returns the atomic value at path
// (DistributedAtomicValue(client, path, retryPolicy[, promotedToLock])).
// It does no I/O; a nil client, an invalid path or a bad option is an
// error wrapping curator.ErrInvalidArgument.
func NewValue(client *framework.Client, path string, opts ...Option) (*Value, error) {
	if err := recipe.CheckArgs(client, "atomic value", path); err != nil {
		return nil, fmt.Errorf("atomic: %w", err)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("atomic: %w", err)
	}
	v := &Value{client: client, path: path, policy: o.policy, lockPolicy: o.lockPolicy, noFirstRead: o.noFirstRead,
		lockTimeout: o.lockTimeout, met: telemetry.ForClient(client).Atomic(path)}
	if o.lockPath != "" {
		if v.mutex, err = locks.NewMutex(client, o.lockPath); err != nil {
			return nil, fmt.Errorf("atomic: promoted lock: %w", err)
		}
	}
	return v, nil
}

// Path returns the value's node path.
func (v *Value) Path() string { return v.path }

// Get reads the value (Curator's get): always Succeeded, PreValue and
// PostValue the bytes read (nil for a missing node).
func (v *Value) Get(ctx context.Context) (Result[[]byte], error) {
	data, _, err := v.read(ctx)
	if err != nil {
		return Result[[]byte]{}, err
	}
	return Result[[]byte]{Succeeded: true, PreValue: data, PostValue: data}, nil
}

// read returns the node's data and stat; nil, nil for a missing node.
func (v *Value) read(ctx context.Context) ([]byte, *framework.Stat, error) {
	data, st, err := v.client.Get(ctx, v.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("atomic: %w", err)
	}
	v.remember(data, st)
	return data, st, nil
}

// ForceSet sets the value whatever it is (Curator's forceSet): a write of
// any version, or a create (parents as containers) if the node is missing.
func (v *Value) ForceSet(ctx context.Context, data []byte) error {
	st, err := v.client.Set(ctx, v.path, data)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = v.client.Create(ctx, v.path, data, framework.WithParentContainers())
		if errors.Is(err, zk.ErrNodeExists) {
			st, err = v.client.Set(ctx, v.path, data)
		}
	}
	if err != nil {
		return fmt.Errorf("atomic: force set: %w", err)
	}
	if st != nil {
		v.remember(data, st)
	}
	return nil
}

// Initialize sets the value only if the node does not exist (Curator's
// initialize): true if this call made it (parents as containers), false
// if it existed.
func (v *Value) Initialize(ctx context.Context, data []byte) (bool, error) {
	ok, err := v.createAt(ctx, data)
	if err != nil {
		return false, fmt.Errorf("atomic: initialize: %w", err)
	}
	return ok, nil
}

// CompareAndSet sets the value to data if it is expected, byte for byte,
// now (Curator's compareAndSet): one read and one write over the version
// read, no retry after a conflict. Not Succeeded, with a nil error, when
// the value differs, changed between the read and the write, or the node
// is missing (even when expected is empty: Initialize first, as in
// Curator).
func (v *Value) CompareAndSet(ctx context.Context, expected, data []byte) (res Result[[]byte], err error) {
	start := time.Now()
	defer func() { res.Stats.OptimisticTime = time.Since(start) }()
	res.Stats.OptimisticTries = 1
	pre, st, err := v.read(ctx)
	if err != nil {
		return res, err
	}
	res.PreValue = pre
	if st == nil || !bytes.Equal(pre, expected) {
		return res, nil
	}
	ok, err := v.setAt(ctx, st, data)
	if ok {
		res.Succeeded, res.PostValue = true, bytes.Clone(data)
	}
	return res, err
}

// TrySet sets the value to data by compare-and-set (Curator's trySet):
// the optimistic loop, then the lock if promoted. An error wrapping
// curator.ErrContention if every try lost to another writer.
func (v *Value) TrySet(ctx context.Context, data []byte) (Result[[]byte], error) {
	data = bytes.Clone(data)
	return v.update(ctx, func([]byte) ([]byte, error) { return data, nil })
}

// update sets the value to next(the value read), by compare-and-set: the
// optimistic loop under v.policy, then, if it gave up and a lock is
// configured, the same under the lock.
func (v *Value) update(ctx context.Context, next func(prev []byte) ([]byte, error)) (res Result[[]byte], err error) {
	if ctx == nil {
		return res, recipe.ErrNilContext
	}
	start := time.Now()
	err = v.loop(ctx, &res, next, v.policy, &res.Stats.OptimisticTries, v.noFirstRead)
	res.Stats.OptimisticTime = time.Since(start)
	if err != nil || res.Succeeded {
		return res, err
	}
	if v.mutex == nil {
		return res, fmt.Errorf("atomic: %s: %d tries: %w", v.path, res.Stats.OptimisticTries, curator.ErrContention)
	}
	v.met.Promoted()
	start = time.Now()
	defer func() { res.Stats.PromotedTime = time.Since(start) }()
	lctx, cancel := context.WithTimeout(ctx, v.lockTimeout)
	err = v.mutex.Lock(lctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return res, fmt.Errorf("atomic: %s: promoted lock %s not had within %v: %w", v.path, v.mutex.Path(), v.lockTimeout, curator.ErrContention)
		}
		return res, fmt.Errorf("atomic: %s: promoted lock: %w", v.path, err)
	}
	defer func() {
		uctx, cancel := recipe.CleanupContext(ctx)
		defer cancel()
		if uerr := v.mutex.Unlock(uctx); uerr != nil {
			v.client.Logger().Warn("atomic: releasing the promoted lock", "path", v.mutex.Path(), "err", uerr)
		}
	}()
	err = v.loop(ctx, &res, next, v.lockPolicy, &res.Stats.PromotedTries, false)
	if err == nil && !res.Succeeded {
		err = fmt.Errorf("atomic: %s: %d optimistic and %d promoted tries: %w", v.path,
			res.Stats.OptimisticTries, res.Stats.PromotedTries, curator.ErrContention)
	}
	return res, err
}

// tryLast is the first optimistic try when this object knows the node as
// it last read or wrote it: the write over that, with no read first (one
// round trip instead of two when no one else wrote since: a writer that
// keeps winning, a counter with one writer at a time). Lost, it is a
// conflict like any other. tried is false when nothing is known (or the
// known data does not decode: the read tells). A node deleted and made
// again that reached the same version in between would pass the version
// check, as it would between Curator's read and write; it is logged (the
// write's stat tells a new node).
func (v *Value) tryLast(ctx context.Context, res *Result[[]byte], next func([]byte) ([]byte, error)) (ok, tried bool, err error) {
	last := v.takeLast()
	if last == nil {
		return false, false, nil
	}
	data, err := next(last.data)
	if err != nil {
		return false, false, nil
	}
	res.PreValue = last.data
	st, ok, err := v.setAtStat(ctx, &last.st, data)
	if ok {
		res.PostValue = bytes.Clone(data)
		if st.Czxid != last.st.Czxid {
			v.client.Logger().Warn("atomic: written over a node made again since it was read", "path", v.path)
		}
	}
	return ok, true, err
}

// loop tries once, then again after each conflict while policy allows,
// counting the tries in *tries; with fast, the first try writes over the
// node as last known here, if known (tryLast).
func (v *Value) loop(ctx context.Context, res *Result[[]byte], next func([]byte) ([]byte, error), policy retry.Policy, tries *int, fast bool) error {
	start := time.Now()
	for n := 0; ; n++ {
		*tries++
		ok, tried, err := false, false, error(nil)
		if n == 0 && fast {
			ok, tried, err = v.tryLast(ctx, res, next)
		}
		if !tried {
			ok, err = v.tryOnce(ctx, res, next)
		}
		if err != nil || ok {
			res.Succeeded = ok
			return err
		}
		sleep, again := policy.Next(n, time.Since(start))
		if !again {
			return nil
		}
		v.met.Retries(1)
		if sleep > 0 {
			t := time.NewTimer(sleep)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("atomic: %s: %w", v.path, ctx.Err())
			}
		}
	}
}

// tryOnce reads the value and writes next(it) over the version read, or
// creates the node if it is missing (Curator's tryOnce): false, nil on a
// conflict (another writer came first).
func (v *Value) tryOnce(ctx context.Context, res *Result[[]byte], next func([]byte) ([]byte, error)) (bool, error) {
	pre, st, err := v.read(ctx)
	if err != nil {
		return false, err
	}
	res.PreValue = pre
	data, err := next(pre)
	if err != nil {
		return false, err
	}
	var ok bool
	if st == nil {
		ok, err = v.createAt(ctx, data)
	} else {
		ok, err = v.setAt(ctx, st, data)
	}
	if ok {
		res.PostValue = bytes.Clone(data)
	}
	return ok, err
}

// unsure reports whether a write that failed with err may have been
// applied: its reply was lost (connection loss, operation timeout) or
// not waited for (ctx ended).
func unsure(err error) bool {
	return errors.Is(err, curator.ErrConnectionLoss) || errors.Is(err, curator.ErrOperationTimeout) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// resolveCtx is the context of the read that finds out whether a write
// took effect: ctx, or, if it has ended, a clean-up context.
func resolveCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return recipe.CleanupContext(ctx)
}

// unknown is the error of a write that may have been applied.
func (v *Value) unknown(err error) error {
	return fmt.Errorf("atomic: %s: the write may have been applied, once (%w): %w", v.path, curator.ErrConnectionLoss, err)
}

// setAt writes data over the version of st, sent once: true if written,
// false on a conflict. A write whose reply was lost is found out by a
// read: not applied (the node unchanged) it is sent again; applied by
// someone else (other bytes one version on) it is a conflict; else it
// may be ours, and the error says so (unknown).
func (v *Value) setAt(ctx context.Context, st *framework.Stat, data []byte) (bool, error) {
	_, ok, err := v.setAtStat(ctx, st, data)
	return ok, err
}

// setAtStat is setAt that also returns the stat of the write.
func (v *Value) setAtStat(ctx context.Context, st *framework.Stat, data []byte) (*framework.Stat, bool, error) {
	for {
		if writeHook != nil {
			writeHook(v.path)
		}
		nst, err := v.client.Set(ctx, v.path, data, framework.WithVersion(st.Version), framework.WithSendOnce())
		switch {
		case err == nil:
			v.remember(data, nst)
			return nst, true, nil
		case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
			return nil, false, nil
		case !unsure(err):
			return nil, false, fmt.Errorf("atomic: %w", err)
		}
		rctx, cancel := resolveCtx(ctx)
		now, st2, rerr := v.client.Get(rctx, v.path)
		cancel()
		if rerr == nil && st2.Czxid == st.Czxid {
			if st2.Version == st.Version { // not applied, and never will be
				if ctx.Err() != nil {
					return nil, false, fmt.Errorf("atomic: %s: %w", v.path, ctx.Err())
				}
				continue
			}
			if st2.Version == st.Version+1 && !bytes.Equal(now, data) {
				return nil, false, nil // another writer's
			}
		}
		return nil, false, v.unknown(err)
	}
}

// createAt creates the node with data, sent once (a Multi with a create
// is never retried blindly): true if made, false if it exists. Parents
// are made as containers. A create whose reply was lost is found out as
// setAt's write is.
func (v *Value) createAt(ctx context.Context, data []byte) (bool, error) {
	if ctx == nil {
		return false, recipe.ErrNilContext
	}
	parents := false
	for {
		if writeHook != nil {
			writeHook(v.path)
		}
		_, err := v.client.Multi(ctx, framework.CreateOp{Path: v.path, Data: data, Mode: framework.ModePersistent})
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, zk.ErrNodeExists):
			return false, nil
		case errors.Is(err, zk.ErrNoNode) && !parents:
			parents = true
			if parent := framework.ParentPath(v.path); parent != "/" {
				_, err := v.client.Create(ctx, parent, nil, framework.WithMode(framework.ModeContainer), framework.WithParentContainers())
				if err != nil && !errors.Is(err, zk.ErrNodeExists) {
					return false, fmt.Errorf("atomic: %w", err)
				}
			}
			continue
		case !unsure(err):
			return false, fmt.Errorf("atomic: %w", err)
		}
		rctx, cancel := resolveCtx(ctx)
		ok, _, rerr := v.client.Exists(rctx, v.path)
		cancel()
		if rerr == nil && !ok {
			if ctx.Err() != nil {
				return false, fmt.Errorf("atomic: %s: %w", v.path, ctx.Err())
			}
			continue
		}
		return false, v.unknown(err)
	}
}

// writeHook, if set (tests), runs before each conditional write or create.
var writeHook func(path string)
