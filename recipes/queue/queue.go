package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// Queue is Curator's DistributedQueue: items of type T, put by any process
// as persistent sequential nodes path/queue-NNNNNNNNNN holding Curator's
// ItemSerializer bytes (Encode), consumed in order by the consumer of every
// started Queue on the path, Java's DistributedQueue included.
//
// Delivery: without WithLockPath, at most once (an item is deleted before
// its consumer sees it; a consumer that fails or dies loses it); with it,
// at least once (deleted only after its consumer returned nil; an item
// whose consumer's process dies, or whose session is lost, is consumed
// again by another). Puts are at least once: a put retried after a lost
// reply can leave the item twice (Curator's too). See the package
// documentation.
//
// Where it differs from Curator: puts are synchronous (Curator's default
// putInBackground loses a failed put silently), Put works before Start,
// and the consumer gets a context and may fail; QueueConsumer.stateChanged
// (never called by Curator, CURATOR-336) has no counterpart. All methods
// are safe for concurrent use.
type Queue[T any] struct{ b *base[T] }

// New returns a queue on path, not started. consume may be nil: a queue
// that only puts (Curator's null consumer). Options: WithLockPath,
// WithMaxItems, WithErrorMode, WithConcurrency, WithOnError. Bad input is
// an error wrapping curator.ErrInvalidArgument.
func New[T any](client *framework.Client, path string, ser Serializer[T], consume Consumer[T], opts ...Option) (*Queue[T], error) {
	b, err := newBase(client, path, ser, consume, kindPlain, commonOpts, opts)
	if err != nil {
		return nil, err
	}
	return &Queue[T]{b}, nil
}

// Start makes the queue's path and the lock path (persistent, their
// parents containers, as Curator's start) and starts consuming if the queue
// has a consumer. A second Start is curator.ErrBusy.
func (q *Queue[T]) Start(ctx context.Context) error { return q.b.start(ctx) }

// Put adds item at the back of the queue. With WithMaxItems it first waits
// for room until ctx ends.
func (q *Queue[T]) Put(ctx context.Context, item T) error {
	return q.b.put(ctx, []T{item}, "")
}

// PutMulti adds items as one node (Curator's putMulti): they are consumed
// together, in order, by one consumer. The node must fit ZooKeeper's
// jute.maxbuffer (1 MB by default), so keep batches small.
func (q *Queue[T]) PutMulti(ctx context.Context, items []T) error {
	return q.b.put(ctx, items, "")
}

// Len returns the number of item nodes in the queue (a PutMulti counts
// once).
func (q *Queue[T]) Len(ctx context.Context) (int, error) { return q.b.length(ctx) }

// Close stops consuming: it ends the consumers' contexts and waits for
// them to return. Puts after it fail with curator.ErrClosed. It does not
// close the client.
func (q *Queue[T]) Close() error { return q.b.close() }

// Priority is Curator's DistributedPriorityQueue: a Queue whose items carry
// a priority, lower consumed first, equal ones in order, in node names
// queue-<PriorityString(p)>NNNNNNNNNN (Curator's). After
// WithMinItemsBeforeRefresh items (default 1), a consumer lists the queue
// again if it changed, so an item of a higher priority put meanwhile comes
// next. A requeued item keeps its priority (Curator's goes to the front
// as priority-less). Delivery as Queue's.
type Priority[T any] struct{ b *base[T] }

// NewPriority returns a priority queue on path, not started. Options: those
// of New, and WithMinItemsBeforeRefresh.
func NewPriority[T any](client *framework.Client, path string, ser Serializer[T], consume Consumer[T], opts ...Option) (*Priority[T], error) {
	b, err := newBase(client, path, ser, consume, kindPriority, priorityOpts, opts)
	if err != nil {
		return nil, err
	}
	return &Priority[T]{b}, nil
}

// Start is Queue.Start.
func (q *Priority[T]) Start(ctx context.Context) error { return q.b.start(ctx) }

// Put adds item with a priority (lower first).
func (q *Priority[T]) Put(ctx context.Context, item T, priority int32) error {
	return q.b.put(ctx, []T{item}, PriorityString(priority))
}

// PutMulti adds items as one node with one priority.
func (q *Priority[T]) PutMulti(ctx context.Context, items []T, priority int32) error {
	return q.b.put(ctx, items, PriorityString(priority))
}

// Len is Queue.Len.
func (q *Priority[T]) Len(ctx context.Context) (int, error) { return q.b.length(ctx) }

// Close is Queue.Close.
func (q *Priority[T]) Close() error { return q.b.close() }

// Delay is Curator's DistributedDelayQueue: a Queue whose items are
// consumed no sooner than a time, in node names
// queue-|<DelayString(until)>|NNNNNNNNNN (Curator's), in the order of
// their times. Times are compared with the consumer's clock, so a skew
// between producer and consumer clocks shifts delivery. A requeued item
// keeps its time (Curator's becomes due at once). Delivery as Queue's.
type Delay[T any] struct{ b *base[T] }

// NewDelay returns a delay queue on path, not started. Options: those of
// New.
func NewDelay[T any](client *framework.Client, path string, ser Serializer[T], consume Consumer[T], opts ...Option) (*Delay[T], error) {
	b, err := newBase(client, path, ser, consume, kindDelay, commonOpts, opts)
	if err != nil {
		return nil, err
	}
	return &Delay[T]{b}, nil
}

// Start is Queue.Start.
func (q *Delay[T]) Start(ctx context.Context) error { return q.b.start(ctx) }

// Put adds item, to be consumed at until or later. until must be after the
// epoch (Curator's delayUntilEpoch > 0).
func (q *Delay[T]) Put(ctx context.Context, item T, until time.Time) error {
	if err := checkUntil(until); err != nil {
		return err
	}
	return q.b.put(ctx, []T{item}, DelayString(until))
}

// PutMulti adds items as one node, to be consumed at until or later.
func (q *Delay[T]) PutMulti(ctx context.Context, items []T, until time.Time) error {
	if err := checkUntil(until); err != nil {
		return err
	}
	return q.b.put(ctx, items, DelayString(until))
}

func checkUntil(until time.Time) error {
	if until.UnixMilli() <= 0 {
		return fmt.Errorf("%w: delay until %v (must be after the epoch)", curator.ErrInvalidArgument, until)
	}
	return nil
}

// Len is Queue.Len.
func (q *Delay[T]) Len(ctx context.Context) (int, error) { return q.b.length(ctx) }

// Close is Queue.Close.
func (q *Delay[T]) Close() error { return q.b.close() }

// IDQueue is Curator's DistributedIdQueue: a Queue whose items carry an
// id, in node names queue-|<id>|NNNNNNNNNN (Curator's; "/" and "|" in an
// id become "_"), consumed in order, and removable by id before they are
// consumed. A requeued item keeps its id, as Curator's. Delivery as
// Queue's. Unlike Curator's, Remove matches the id as it is written (Curator
// compares the id given with the fixed one, so an id with "/" or "|" is
// never removed).
type IDQueue[T any] struct{ b *base[T] }

// NewIDQueue returns an id queue on path, not started. Options: those of
// New.
func NewIDQueue[T any](client *framework.Client, path string, ser Serializer[T], consume Consumer[T], opts ...Option) (*IDQueue[T], error) {
	b, err := newBase(client, path, ser, consume, kindID, commonOpts, opts)
	if err != nil {
		return nil, err
	}
	return &IDQueue[T]{b}, nil
}

// Start is Queue.Start.
func (q *IDQueue[T]) Start(ctx context.Context) error { return q.b.start(ctx) }

// Put adds item with an id (not empty). Curator's IDQueue has no PutMulti;
// neither has this.
func (q *IDQueue[T]) Put(ctx context.Context, item T, id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty id", curator.ErrInvalidArgument)
	}
	return q.b.put(ctx, []T{item}, string(separator)+fixID(id)+string(separator))
}

// Remove deletes every item with id that no consumer holds, unconsumed,
// and returns how many it deleted (Curator's remove). With a lock path it
// locks each first, as a consumer would.
func (q *IDQueue[T]) Remove(ctx context.Context, id string) (int, error) {
	return q.b.remove(ctx, id)
}

// Len is Queue.Len.
func (q *IDQueue[T]) Len(ctx context.Context) (int, error) { return q.b.length(ctx) }

// Close is Queue.Close.
func (q *IDQueue[T]) Close() error { return q.b.close() }
