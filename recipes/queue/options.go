package queue

import (
	"fmt"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/recipe"
)

// Option configures a Queue, a Priority, a Delay or an IDQueue (Curator's
// QueueBuilder settings). Each constructor refuses, with an error wrapping
// curator.ErrInvalidArgument, an option that does not apply to it (listed
// with each option).
type Option func(*options)

type options struct {
	recipe.Options // its Fail and Apply
	given          optionKind
	lockPath       string
	maxItems       int
	errorMode      ErrorMode
	concurrency    int
	minRefresh     int
	onError        func(error)
}

type optionKind uint8

const (
	optLockPath optionKind = 1 << iota
	optMaxItems
	optErrorMode
	optConcurrency
	optMinRefresh
	optOnError
)

var optionNames = []string{"WithLockPath", "WithMaxItems", "WithErrorMode", "WithConcurrency",
	"WithMinItemsBeforeRefresh", "WithOnError"}

const (
	commonOpts   = optLockPath | optMaxItems | optErrorMode | optConcurrency | optOnError
	priorityOpts = commonOpts | optMinRefresh
)

func (o *options) apply(what string, allowed optionKind, opts []Option) error {
	o.errorMode = ErrorRequeue
	o.concurrency = 1
	o.minRefresh = 1
	if err := recipe.Apply(o, opts); err != nil {
		return err
	}
	if err := recipe.NotFor(what, uint64(o.given), uint64(allowed), optionNames); err != nil {
		return err
	}
	if o.given&optErrorMode != 0 && o.lockPath == "" {
		return fmt.Errorf("%w: WithErrorMode needs WithLockPath (without a lock path an item is deleted before it is consumed)", curator.ErrInvalidArgument)
	}
	return nil
}

// ErrorMode is what a queue with a lock path does with an item whose
// consumer returned an error (Curator's ErrorMode).
type ErrorMode int

const (
	// ErrorRequeue (the default, as Curator's): the item goes to the back
	// of the queue (its priority, delay or id kept; Curator keeps only the
	// id), to be consumed again. Of a node holding several items
	// (PutMulti), only the failed item and those after it are requeued
	// (Curator requeues the whole node, so the items consumed before the
	// failure are consumed twice).
	ErrorRequeue ErrorMode = iota
	// ErrorDelete: the item is deleted, as if consumed; the error goes to
	// WithOnError.
	ErrorDelete
)

// WithLockPath makes consumption at-least-once (Curator's lockPath): before
// consuming an item named queue-N, a consumer makes the ephemeral node
// lockPath/queue-N, and it deletes the item only once its consumer
// returned nil. A consumer process that dies mid-item loses that node with
// its session, and another consumer takes the item again. lockPath must
// differ from the queue's path. Queue, Priority, Delay, IDQueue.
func WithLockPath(lockPath string) Option {
	return func(o *options) {
		o.given |= optLockPath
		o.lockPath = lockPath
	}
}

// WithMaxItems bounds the queue (Curator's maxItems): a put waits while the
// queue's path has n children or more, until there is room or its context
// ends (one deadline for the whole put, where Curator's maxWait applies to
// each wake-up). The bound is approximate: producers that find room at the
// same moment all put. It is also the guard against Tech Note 4's limit
// (see the package documentation): set it below the number of children one
// listing can carry. Queue, Priority, Delay, IDQueue.
func WithMaxItems(n int) Option {
	return func(o *options) {
		o.given |= optMaxItems
		if n < 1 {
			o.Fail("max items %d (at least 1)", n)
		}
		o.maxItems = n
	}
}

// WithErrorMode sets what happens to an item whose consumer failed
// (default ErrorRequeue). It needs WithLockPath, as Curator's
// setErrorMode: without one, an item is deleted before it is consumed.
// Queue, Priority, Delay, IDQueue.
func WithErrorMode(m ErrorMode) Option {
	return func(o *options) {
		o.given |= optErrorMode
		if m != ErrorRequeue && m != ErrorDelete {
			o.Fail("unknown error mode %d", m)
		}
		o.errorMode = m
	}
}

// WithConcurrency runs up to n consumers at once in this process (Curator's
// executor; default 1, one item at a time, as Curator's default direct
// executor). With more than one, items are taken in the queue's order but
// may finish out of it. Queue, Priority, Delay, IDQueue.
func WithConcurrency(n int) Option {
	return func(o *options) {
		o.given |= optConcurrency
		if n < 1 || n > 1024 {
			o.Fail("concurrency %d (from 1 to 1024)", n)
		}
		o.concurrency = n
	}
}

// WithMinItemsBeforeRefresh sets how many items a Priority consumes before
// it lists the queue again when the queue changed meanwhile (Curator's
// minItemsBeforeRefresh; default 1: an item of a higher priority put
// meanwhile comes next, at one listing per item). Priority.
func WithMinItemsBeforeRefresh(n int) Option {
	return func(o *options) {
		o.given |= optMinRefresh
		if n < 1 {
			o.Fail("min items before refresh %d (at least 1)", n)
		}
		o.minRefresh = n
	}
}

// WithOnError sets the function told of what goes wrong in the background:
// a consumer's error or panic (wrapping curator.ErrPanic), an item that is
// not in Curator's format or that the Serializer refuses (wrapping
// curator.ErrCorrupt; the item is deleted, as Curator does), a failed
// ZooKeeper operation (retried). It must not block. Default: logged by the
// client's logger. Queue, Priority, Delay, IDQueue.
func WithOnError(fn func(error)) Option {
	return func(o *options) {
		o.given |= optOnError
		if fn == nil {
			o.Fail("nil WithOnError function")
		}
		o.onError = fn
	}
}
