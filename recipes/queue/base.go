package queue

import (
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

// Consumer is the function a queue hands each item to (Curator's
// QueueConsumer.consumeMessage). Its ctx ends when the queue is closed and,
// with a lock path, when the session holding the item's lock node is lost
// (another consumer may then take the item). With a lock path, the item is
// deleted only once it returned nil; see ErrorMode for an error.
type Consumer[T any] func(ctx context.Context, item T) error

// base is what Queue, Priority, Delay and IDQueue share: the puts and the
// consumer loop, the kind telling names and order apart.
type base[T any] struct {
	client  *framework.Client
	path    string
	ser     Serializer[T]
	consume Consumer[T]
	o       options
	kind    kind
	met     *metrics

	mu      sync.Mutex
	started bool
	closed  bool
	quit    chan struct{} // closed by Close
	cancel  context.CancelFunc
	done    chan struct{} // closed when the consumer loop has returned
	wake    chan struct{} // the lock of an item skipped was released: list again

	skipMu  sync.Mutex
	skipped []string // lock nodes of items skipped in this batch (watchSkipped)
}

func newBase[T any](client *framework.Client, queuePath string, ser Serializer[T], consume Consumer[T], k kind, allowed optionKind, opts []Option) (*base[T], error) {
	if err := recipe.CheckArgs(client, "queue", queuePath); err != nil {
		return nil, err
	}
	if ser == nil {
		return nil, fmt.Errorf("%w: nil Serializer", curator.ErrInvalidArgument)
	}
	b := &base[T]{client: client, path: queuePath, ser: ser, consume: consume, kind: k, quit: make(chan struct{}), wake: make(chan struct{}, 1)}
	if err := b.o.apply(kindNames[k], allowed, opts); err != nil {
		return nil, err
	}
	if lp := b.o.lockPath; lp != "" {
		if err := recipe.CheckArgs(client, "lock", lp); err != nil {
			return nil, err
		}
		if lp == queuePath {
			return nil, fmt.Errorf("%w: the lock path is the queue's path %s", curator.ErrInvalidPath, lp)
		}
	}
	b.met = newMetrics(client, queuePath)
	return b, nil
}

// start makes the queue's path (and the lock path), persistent, their
// parents containers, as Curator's start, and starts the consumer loop if
// there is a consumer.
func (b *base[T]) start(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return fmt.Errorf("queue %s: %w", b.path, curator.ErrClosed)
	case b.started:
		b.mu.Unlock()
		return fmt.Errorf("queue %s: started already: %w", b.path, curator.ErrBusy)
	}
	b.started = true
	b.mu.Unlock()
	err := b.ensure(ctx, b.path)
	if err == nil && b.o.lockPath != "" {
		err = b.ensure(ctx, b.o.lockPath)
	}
	if err != nil {
		b.mu.Lock()
		b.started = false
		b.mu.Unlock()
		return fmt.Errorf("queue %s: start: %w", b.path, err)
	}
	if b.consume == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("queue %s: %w", b.path, curator.ErrClosed)
	}
	var rctx context.Context
	rctx, b.cancel = context.WithCancel(context.Background())
	b.done = make(chan struct{})
	go b.run(rctx)
	return nil
}

// close stops the consumer loop and waits for it, consumers included (their
// ctx ended). Puts after it fail with curator.ErrClosed. Idempotent.
func (b *base[T]) close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.quit)
		if b.cancel != nil {
			b.cancel()
		}
	}
	done := b.done
	b.mu.Unlock()
	if done != nil {
		<-done
	}
	b.met.close()
	return nil
}

func (b *base[T]) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// ensure makes p persistent, its parents containers; there already is fine.
func (b *base[T]) ensure(ctx context.Context, p string) error {
	_, err := b.client.Create(ctx, p, nil, framework.WithParentContainers())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// report hands a background error to WithOnError, or logs it.
func (b *base[T]) report(err error) {
	if b.o.onError != nil {
		b.o.onError(err)
		return
	}
	b.client.Logger().Warn("queue", "path", b.path, "err", err)
}

// put writes one node holding items, named prefix + the server's sequence
// (prefix after "queue-": a priority, a delay, an id).
func (b *base[T]) put(ctx context.Context, items []T, prefix string) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	if len(items) == 0 {
		return fmt.Errorf("%w: no items to put", curator.ErrInvalidArgument)
	}
	if b.isClosed() {
		return fmt.Errorf("queue %s: %w", b.path, curator.ErrClosed)
	}
	raw := make([][]byte, len(items))
	for i, it := range items {
		d, err := b.ser.Serialize(it)
		if err != nil {
			return fmt.Errorf("%w: queue %s: serializing item %d: %w", curator.ErrInvalidArgument, b.path, i, err)
		}
		raw[i] = d
	}
	data := Encode(raw...)
	if b.o.maxItems > 0 {
		if err := b.waitRoom(ctx); err != nil {
			return err
		}
	}
	node := b.path + "/" + itemPrefix + prefix
	_, err := b.client.Create(ctx, node, data, framework.WithMode(framework.ModePersistentSequential))
	if errors.Is(err, zk.ErrNoNode) { // the queue's path is not there (yet, or any more)
		if err = b.ensure(ctx, b.path); err == nil {
			_, err = b.client.Create(ctx, node, data, framework.WithMode(framework.ModePersistentSequential))
		}
	}
	if err != nil {
		return fmt.Errorf("queue %s: put: %w", b.path, err)
	}
	b.met.put(len(items))
	return nil
}

// waitRoom waits until the queue's path has fewer than maxItems children
// (all children, as Curator counts) or ctx ends.
func (b *base[T]) waitRoom(ctx context.Context) error {
	for {
		ok, st, err := b.client.Exists(ctx, b.path)
		if err != nil {
			return fmt.Errorf("queue %s: put: %w", b.path, err)
		}
		if !ok || int(st.NumChildren) < b.o.maxItems {
			return nil
		}
		names, _, w, err := b.client.ChildrenW(ctx, b.path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil
		case err != nil:
			return fmt.Errorf("queue %s: put: %w", b.path, err)
		case len(names) < b.o.maxItems:
			w.Stop()
			return nil
		}
		select {
		case <-w.C():
		case <-b.quit:
			w.Stop()
			return fmt.Errorf("queue %s: %w", b.path, curator.ErrClosed)
		case <-ctx.Done():
			w.Stop()
			return fmt.Errorf("queue %s: put: full (%d items or more): %w", b.path, b.o.maxItems, ctx.Err())
		}
	}
}

// length counts the queue's items (children named queue-).
func (b *base[T]) length(ctx context.Context) (int, error) {
	if ctx == nil {
		return 0, recipe.ErrNilContext
	}
	names, _, err := b.client.Children(ctx, b.path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("queue %s: %w", b.path, err)
	}
	n := 0
	for _, name := range names {
		if _, ok := b.kind.parse(name); ok {
			n++
		}
	}
	return n, nil
}

// run is the consumer loop (Curator's runLoop): list the queue with a
// watch, consume what is due in order, wait for a change (or the next due
// time), again.
func (b *base[T]) run(ctx context.Context) {
	defer close(b.done)
	pause := time.Duration(0)
	for ctx.Err() == nil {
		names, _, w, err := b.client.ChildrenW(ctx, b.path)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, curator.ErrClosed) {
				return
			}
			if errors.Is(err, zk.ErrNoNode) { // deleted, or a container reaped (CURATOR-308)
				if err = b.ensure(ctx, b.path); err == nil {
					continue
				}
			}
			b.report(fmt.Errorf("queue %s: listing: %w", b.path, err))
			pause = min(max(2*pause, 50*time.Millisecond), time.Second)
			if !sleep(ctx, pause) {
				return
			}
			continue
		}
		pause = 0
		changed := make(chan struct{})
		w.AfterFunc(func(framework.Event) { close(changed) })
		es := make([]entry, 0, len(names))
		for _, name := range names {
			if e, ok := b.kind.parse(name); ok {
				es = append(es, e)
			}
		}
		b.kind.sort(es)
		b.met.depth(len(es))
		next := b.batch(ctx, es, changed)
		b.watchSkipped(ctx, changed)
		var timer *time.Timer
		var due <-chan time.Time
		if next > 0 {
			timer = time.NewTimer(time.Until(time.UnixMilli(next)))
			due = timer.C
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-due:
		case <-b.wake:
		}
		if timer != nil {
			timer.Stop()
		}
		w.Stop()
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// batch consumes the due items of one listing, in order, up to
// WithConcurrency at a time, and returns when all are done (0) or, for a
// Delay, the epoch in ms the first item not due yet is due at. A Priority
// lists again after WithMinItemsBeforeRefresh items if the queue changed.
func (b *base[T]) batch(ctx context.Context, es []entry, changed <-chan struct{}) int64 {
	now := time.Now().UnixMilli()
	conc := b.o.concurrency
	var (
		wg  sync.WaitGroup
		sem chan struct{}
	)
	if conc > 1 {
		sem = make(chan struct{}, conc)
	}
	defer wg.Wait()
	for i, e := range es {
		if ctx.Err() != nil {
			return 0
		}
		if b.kind == kindDelay && e.due > now {
			return e.due // sorted by due time: the rest are later
		}
		if b.kind == kindPriority && i >= b.o.minRefresh && isDone(changed) {
			return 0
		}
		if sem == nil {
			b.process(ctx, e)
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return 0
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			b.process(ctx, e)
		}()
	}
	return 0
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (b *base[T]) itemPath(name string) string { return b.path + "/" + name }

// process consumes one item node: without a lock path, read and delete it,
// then consume (at most once: Curator's processNormally); with one, lock it,
// read, consume, then delete or requeue it, then unlock (at least once:
// Curator's processWithLockSafety).
func (b *base[T]) process(ctx context.Context, e entry) {
	if b.o.lockPath == "" {
		data, st, err := b.client.Get(ctx, b.itemPath(e.name))
		if err == nil {
			err = b.client.Delete(ctx, b.itemPath(e.name), framework.WithVersion(st.Version))
		}
		if err != nil {
			b.opFailed(ctx, e, err)
			return
		}
		b.met.taken(st)
		b.consumeAll(ctx, e, data)
		return
	}
	lctx, release, ok := b.lock(ctx, e)
	if !ok {
		return
	}
	lockGone := false // deleted with the item, in one multi
	defer func() {
		if !lockGone {
			release()
		}
	}()
	data, st, err := b.client.Get(lctx, b.itemPath(e.name))
	if err != nil {
		b.opFailed(lctx, e, err)
		return
	}
	failed, items := b.consumeAll(lctx, e, data)
	// The consumer is done with the item: what follows must happen even if
	// Close ended ctx meanwhile, or a clean Close would leave a consumed
	// item in the queue, to be consumed again (the bench's queue workload
	// found it: TestCloseAfterConsumeDeletesItem).
	if failed >= 0 && ctx.Err() != nil {
		return // closing: the item stays where it is, unlocked by release
	}
	ctx, cancel := recipe.CleanupContext(ctx)
	defer cancel()
	if failed >= 0 && b.o.errorMode == ErrorRequeue {
		// Only the failed item and those after it go back (Curator requeues
		// the whole node), under the same prefix (Curator's drops a
		// priority or a delay, keeping only an id).
		_, err = b.client.Multi(ctx,
			framework.DeleteOp{Path: b.itemPath(e.name), Version: -1},
			framework.CreateOp{Path: b.path + "/" + e.prefix(), Data: Encode(items[failed:]...), Mode: framework.ModePersistentSequential})
		if err != nil {
			b.opFailed(ctx, e, fmt.Errorf("requeue: %w", err))
		}
		return
	}
	// The item and its lock node go in one multi (one round trip where
	// Curator's takes two: the item's delete, then the lock's). It fails as
	// a whole if either is gone: the lock node expired with a session lost
	// meanwhile (the item is consumed all the same: it is deleted alone
	// below), or the item deleted by another consumer that took it after
	// such a loss (NoNode again below, ignored). Deleting the lock node
	// when another session has made it again since (our session lost, the
	// item redelivered) takes the item from under that consumer: it is
	// consuming a copy already, and no third one can take it.
	if _, err := b.client.Multi(ctx,
		framework.DeleteOp{Path: b.itemPath(e.name), Version: -1},
		framework.DeleteOp{Path: b.o.lockPath + "/" + e.name, Version: -1}); err == nil {
		lockGone = true
		b.met.taken(st)
		return
	}
	if err := b.client.Delete(ctx, b.itemPath(e.name)); err != nil {
		b.opFailed(ctx, e, err)
		return
	}
	b.met.taken(st)
}

// opFailed reports a failed operation on an item, unless another consumer
// won it (zk.ErrNoNode, zk.ErrBadVersion) or the queue is closing.
func (b *base[T]) opFailed(ctx context.Context, e entry, err error) {
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) || ctx.Err() != nil || errors.Is(err, curator.ErrClosed) {
		return
	}
	b.report(fmt.Errorf("queue %s: item %s: %w", b.path, e.name, err))
}

// lock makes the item's lock node, lockPath/<item name>, ephemeral. Not
// through the lock driver (internal/driver) on purpose: this is no queue
// of contenders but a claim (Curator's processWithLockSafety), one node
// per item whose name Java consumers make too, which nobody waits on: a
// consumer that finds it taken goes to the next item. It
// returns the consumer's context, ended also when that node's session is
// lost, and the release, a guaranteed delete; false if another consumer
// holds the item (noted: watchSkipped watches its lock at the end of the
// batch, if need be).
func (b *base[T]) lock(ctx context.Context, e entry) (context.Context, func(), bool) {
	lockNode := b.o.lockPath + "/" + e.name
	s, err := b.claim(ctx, lockNode)
	if errors.Is(err, zk.ErrNoNode) { // the lock path is gone (reaped, deleted)
		if err = b.ensure(ctx, b.o.lockPath); err == nil {
			s, err = b.claim(ctx, lockNode)
		}
	}
	if errors.Is(err, zk.ErrNodeExists) {
		b.skip(lockNode)
		return nil, nil, false // another consumer's
	}
	if err != nil {
		b.opFailed(ctx, e, fmt.Errorf("lock %s: %w", lockNode, err))
		return nil, nil, false
	}
	lctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.Context(), func() {
		cancel(fmt.Errorf("queue %s: the lock of item %s: %w", b.path, e.name, curator.ErrLockLost))
	})
	return lctx, func() {
		stop()
		cancel(nil)
		dctx, dcancel := recipe.CleanupContext(ctx)
		defer dcancel()
		if err := recipe.DeleteOwn(dctx, b.client, lockNode); err != nil && !errors.Is(err, curator.ErrClosed) {
			b.report(fmt.Errorf("queue %s: unlock %s: %w", b.path, lockNode, err))
		}
	}, true
}

// claim makes lockNode, ephemeral, and returns the session it belongs
// to. It is made by a one-op multi, which the framework sends once (a
// plain create would be sent again after a lost reply, and could not tell
// its own earlier success from another consumer's node): so
// zk.ErrNodeExists means the node was there before, another consumer's
// (or ours from an earlier take of the item, its delete still pending),
// and costs no read; Curator's loser pays the same one round trip. A lost
// reply, or a session replaced during the call, is resolved by a read of
// the node's owner: ours, the item is ours (Curator's would skip an item
// locked by itself until its session ended: code reading); another's,
// zk.ErrNodeExists; not there, the create is made again.
// TestClaimLostReplyResolved attacks the lost reply.
func (b *base[T]) claim(ctx context.Context, lockNode string) (*framework.Session, error) {
	for {
		s := b.client.Session()
		_, err := b.client.Multi(ctx, framework.CreateOp{Path: lockNode, Mode: framework.ModeEphemeral})
		if err == nil && s != nil && b.client.Session() == s {
			return s, nil
		}
		if err != nil && !errors.Is(err, curator.ErrConnectionLoss) {
			return nil, err
		}
		ok, st, xerr := b.client.Exists(ctx, lockNode)
		now := b.client.Session()
		switch {
		case xerr != nil:
			return nil, xerr
		case ok && now != nil && st.EphemeralOwner == now.ID():
			return now, nil
		case ok:
			return nil, fmt.Errorf("%w (another session's)", zk.ErrNodeExists)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
	}
}

// skip notes the lock node of an item another consumer holds, for the
// consumer loop (none without a consumer: IDQueue.Remove of a queue that
// only puts would pile them up).
func (b *base[T]) skip(lockNode string) {
	if b.consume == nil {
		return
	}
	b.skipMu.Lock()
	b.skipped = append(b.skipped, lockNode)
	b.skipMu.Unlock()
}

// watchSkipped runs at the end of each batch: it makes sure the consumer
// loop lists the queue again once an item skipped because another
// consumer held it may be ours to take. If the queue's path changed since
// the listing (changed is closed), the loop lists again at once anyway,
// and tries those items again: no watch needed, and none is set (a busy
// queue, where every consumer skips the items the others hold, pays no
// round trip for them). Else each skipped lock node is watched: a holder
// that consumes or requeues its item changes the queue's path, but one
// whose session ends leaves the item there unchanged, and only its lock
// node's deletion tells (Curator's waits for the next put: code reading).
// A lock node deleted between the failed claim and this read is found
// not there: the loop is woken at once. Relies on: run's select waking on
// changed and on wake. TestSessionExpiryRedelivers attacks the unchanged
// queue (the second consumer skips the item, then its holder's session
// expires).
func (b *base[T]) watchSkipped(ctx context.Context, changed <-chan struct{}) {
	b.skipMu.Lock()
	nodes := b.skipped
	b.skipped = nil
	b.skipMu.Unlock()
	for _, node := range nodes {
		if isDone(changed) || ctx.Err() != nil {
			return
		}
		ok, _, w, err := b.client.ExistsW(ctx, node)
		if b.watchLock(ok, w, err) {
			return // woken already: the loop lists again
		}
	}
}

// watchLock wakes the consumer loop once the lock node that ExistsW (ok,
// w, err) read, another consumer's lock of an item we skipped, is deleted: by that consumer (the item consumed,
// or requeued) or by the server when its session ends (the item is ours to
// take again). The queue's path may not change meanwhile, so its child
// watch alone would leave the item there until the next put (Curator's
// would: code reading).
// It reports whether it woke the loop at once.
func (b *base[T]) watchLock(ok bool, w *framework.Watch, err error) bool {
	if err != nil || !ok {
		if w != nil {
			w.Stop()
		}
		b.wakeUp()
		return true
	}
	w.AfterFunc(func(framework.Event) { b.wakeUp() })
	return false
}

func (b *base[T]) wakeUp() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// consumeAll decodes an item node and hands each item to the consumer, in
// order. It returns the index of the item whose consumer failed (-1 if
// none) and the node's items. Bytes not in Curator's format, or an item
// the Serializer refuses, are reported (curator.ErrCorrupt) and count as
// consumed: the node is deleted, as Curator does.
func (b *base[T]) consumeAll(ctx context.Context, e entry, data []byte) (int, [][]byte) {
	items, err := Decode(data)
	if err != nil {
		b.report(fmt.Errorf("queue %s: item %s deleted: %w", b.path, e.name, err))
		return -1, nil
	}
	for i, raw := range items {
		v, err := b.ser.Deserialize(raw)
		if err != nil {
			b.report(fmt.Errorf("%w: queue %s: item %s (%d of %d) dropped: %w", curator.ErrCorrupt, b.path, e.name, i+1, len(items), err))
			continue
		}
		if err := b.call(ctx, v); err != nil {
			b.report(fmt.Errorf("queue %s: item %s (%d of %d): consumer: %w", b.path, e.name, i+1, len(items), err))
			return i, items
		}
		b.met.consumed()
	}
	return -1, items
}

// call runs the consumer, a panic recovered into an error wrapping
// curator.ErrPanic.
func (b *base[T]) call(ctx context.Context, v T) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", curator.ErrPanic, p)
		}
	}()
	return b.consume(ctx, v)
}

// remove deletes every item with this id (IDQueue.Remove), locking each
// first when there is a lock path, and returns how many it deleted.
func (b *base[T]) remove(ctx context.Context, id string) (int, error) {
	if ctx == nil {
		return 0, recipe.ErrNilContext
	}
	if id == "" {
		return 0, fmt.Errorf("%w: empty id", curator.ErrInvalidArgument)
	}
	if b.isClosed() {
		return 0, fmt.Errorf("queue %s: %w", b.path, curator.ErrClosed)
	}
	id = fixID(id)
	names, _, err := b.client.Children(ctx, b.path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("queue %s: remove %s: %w", b.path, id, err)
	}
	count := 0
	for _, name := range names {
		e, ok := b.kind.parse(name)
		if !ok || e.id != id {
			continue
		}
		release := func() {}
		if b.o.lockPath != "" {
			var locked bool
			if _, release, locked = b.lock(ctx, e); !locked {
				continue
			}
		}
		err := b.client.Delete(ctx, b.itemPath(name))
		release()
		switch {
		case err == nil:
			count++
		case errors.Is(err, zk.ErrNoNode):
		default:
			return count, fmt.Errorf("queue %s: remove %s: %w", b.path, name, err)
		}
	}
	return count, nil
}
