package locks

import (
	"context"
	"fmt"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/telemetry"
)

// ReadWriteLock is Curator's InterProcessReadWriteLock: any number of
// readers, or one writer. Readers and writers share one queue under the
// lock path ("_c_<uuid>-__READ__<seq>", "_c_<uuid>-__WRIT__<seq>"): a writer
// holds when it is first; a reader holds when no writer is queued before it,
// and waits only on the first such writer, so interleaved readers and
// writers never stall (unlike kazoo 2.8, python-zk/kazoo#649).
//
// As in Curator, the two halves are two locks on two drivers with
// different predicates. Goroutines sharing one ReadWriteLock take each half
// one at a time, exactly like a Mutex; for concurrent readers in one
// process, give each goroutine its own ReadWriteLock (NewReadWriteLock does
// no I/O).
type ReadWriteLock struct {
	read  *ReadLock
	write *WriteLock
}

// ReadLock is the read half of a ReadWriteLock (Curator's readLock()).
//
// Downgrade: Lock with the context handed out by the write half (Acquire
// or Do) takes the read lock at once, even while another goroutine of the
// same ReadWriteLock waits for the read lock (that goroutine then gets it
// once the downgraded holding is released); its node takes the writer's
// place in the queue (CURATOR-621), so writers queued behind stay blocked
// after the write lock is released.
type ReadLock struct {
	lock
	write *WriteLock
	// slot: one holding of the read half at a time, queued or downgraded.
	// A downgrade takes only the slot, never the turn, so it does not wait
	// behind a goroutine of the same instance queued for the read lock.
	slot token
	// the write holding the current read holding was downgraded from
	downFrom *holding
	down     *holding
}

// WriteLock is the write half of a ReadWriteLock (Curator's writeLock()).
// Upgrade (Lock with a context handed out by the read half) fails with
// curator.ErrUpgrade instead of blocking forever as in Curator.
type WriteLock struct {
	lock
	read *ReadLock
}

var (
	_ curator.Locker = (*ReadLock)(nil)
	_ curator.Locker = (*WriteLock)(nil)
)

// NewReadWriteLock returns a read-write lock on path. It does no I/O; a nil
// client, an invalid path or a bad option gives an error wrapping
// curator.ErrInvalidArgument.
func NewReadWriteLock(client *framework.Client, path string, opts ...Option) (*ReadWriteLock, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	wd, err := driver.New(client, path, layout.WriteName, driver.MaxLeases(1), layout.ReadName, layout.WriteName)
	if err != nil {
		return nil, fmt.Errorf("locks: %w", err)
	}
	rd, err := driver.New(client, path, layout.ReadName, driver.NoneBefore(layout.WriteName), layout.ReadName, layout.WriteName)
	if err != nil {
		return nil, fmt.Errorf("locks: %w", err)
	}
	r := &ReadLock{slot: make(token, 1)}
	w := &WriteLock{read: r}
	r.write = w
	r.init(rd, o, r, telemetry.KindRead)
	w.init(wd, o, w, telemetry.KindWrite)
	return &ReadWriteLock{read: r, write: w}, nil
}

// Read returns the read half (Curator's readLock()).
func (rw *ReadWriteLock) Read() *ReadLock { return rw.read }

// Write returns the write half (Curator's writeLock()).
func (rw *ReadWriteLock) Write() *WriteLock { return rw.write }

func (w *WriteLock) take(ctx context.Context, try bool) (*holding, error) {
	if w.read.heldBy(ctx) != nil {
		return nil, fmt.Errorf("%s: %w", w.d.Path(), curator.ErrUpgrade)
	}
	return w.queued(ctx, try, nil)
}

func (r *ReadLock) take(ctx context.Context, try bool) (*holding, error) {
	if wh := r.write.heldBy(ctx); wh != nil {
		return r.downgrade(ctx, try, wh)
	}
	// Ours in ZooKeeper's queue, then the slot: a downgraded holding of
	// this instance may still have it.
	return r.queued(ctx, try, r.slot)
}

// downgrade takes the read lock for the holder of the write lock, at once,
// with a read node in the writer's place: "__READ__<writer's sequence>".
// It needs no turn in the instance's queue, only the slot (free unless a
// holding of the read half outlived a write). A second downgrade through
// the same write holding re-enters the first.
func (r *ReadLock) downgrade(ctx context.Context, try bool, wh *holding) (*holding, error) {
	r.mu.Lock()
	if r.h != nil && r.h == r.down && r.downFrom == wh {
		defer r.mu.Unlock()
		return countLocked(r.h)
	}
	r.mu.Unlock()
	ctx, acq := r.tel.StartAcquire(ctx)
	if err := r.slot.take(ctx, try, r.d.Path()); err != nil {
		acq.End(err)
		return nil, err
	}
	c, token, err := r.takePlace(ctx, wh)
	if err == nil {
		acq.Enqueued(c.Node())
	}
	acq.End(err)
	if err != nil {
		r.slot.give()
		return nil, err
	}
	if r.opts.OnEnqueue != nil {
		r.opts.OnEnqueue(c.Node())
	}
	h := r.install(telemetry.Outer(ctx), c, token, r.slot.give)
	r.mu.Lock()
	r.down, r.downFrom = h, wh
	r.mu.Unlock()
	return h, nil
}

// takePlace makes the read node in wh's place, "__READ__<writer's
// sequence>", if wh still holds. The place is the writer's only while its
// node is there: made once it is gone, the read node would sort before a
// writer that came after and holds now, and hold beside it. A deleted node
// never comes back, so finding the writer's node after ours is made proves
// it was there when ours was; else ours goes and the downgrade fails with
// the loss. (A context that keeps the write holding's key but not its
// cancellation, context.WithoutCancel, can outlive the holding.)
//
// The read holding's fencing token is its writer's (the writer node's
// creation zxid, read by the same exists), not its own node's: it holds in
// the writer's place, and a writer queued behind, whose node is older than
// ours, holds next; with our own node's token the tokens would go back
// there.
func (r *ReadLock) takePlace(ctx context.Context, wh *holding) (c *driver.Contender, token int64, err error) {
	if wh.IsLost() {
		return nil, 0, wh.LostErr()
	}
	// ctx is mostly the write holding's own context, which its loss ends: a
	// call cut short by that is the loss, and says so.
	lost := func(err error) error {
		if wh.IsLost() {
			return wh.LostErr()
		}
		return err
	}
	seq, _ := r.write.d.Sequence(wh.Contender().Name()) // a held node always has one
	c, err = r.d.EnqueueAs(ctx, layout.ReadName+seq, r.opts.Data)
	if err != nil {
		return nil, 0, lost(err)
	}
	there, st, err := r.d.Client().Exists(ctx, wh.Node())
	if err == nil && !there {
		err = wh.LostErr()
	}
	if err != nil {
		c.DeleteQuietly(ctx)
		return nil, 0, lost(err)
	}
	return c, st.Czxid, nil
}
