package framework

import (
	"context"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// bgJob is an operation that must eventually succeed (a guaranteed delete,
// the deletion of a protected node a failed create may have left): it is
// retried in the background until it returns nil or a non-retryable error,
// or the client is closed (Curator's FailedDeleteManager and
// FindAndDeleteProtectedNodeInBackground).
type bgJob struct {
	name string
	fn   func(ctx context.Context) error
	bo   backoff.BackOff
	done chan struct{}
	err  error // the outcome, set before done is closed
}

type background struct {
	c       *Client
	q       *queue[*bgJob]
	mu      sync.Mutex
	pending int
}

func newBackground(c *Client) *background {
	return &background{c: c, q: newQueue[*bgJob]()}
}

// submit queues fn; the job's done channel is closed when it is done.
func (b *background) submit(name string, fn func(ctx context.Context) error) *bgJob {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = 50 * time.Millisecond
	bo.MaxInterval = time.Second
	bo.MaxElapsedTime = 0 // until done or closed
	j := &bgJob{name: name, fn: fn, bo: bo, done: make(chan struct{})}
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
	b.q.push(j)
	return j
}

// hold counts work that will be submitted later as pending; release
// undoes it (after the submit, so that pending never drops to 0 meanwhile).
func (b *background) hold() {
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
}

func (b *background) release() {
	b.mu.Lock()
	b.pending--
	b.mu.Unlock()
}

func (b *background) finish(j *bgJob, err error) {
	b.mu.Lock()
	b.pending--
	b.mu.Unlock()
	j.err = err
	close(j.done)
}

func (b *background) run() {
	ctx := b.c.ctx
	var timers sync.WaitGroup
	defer timers.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.q.signal:
		}
		for _, j := range b.q.drain() {
			err := j.fn(ctx)
			switch {
			case err == nil:
				b.finish(j, nil)
				continue
			case ctx.Err() != nil: // abandoned by Close
				b.finish(j, ErrClosed)
				continue
			case !retryable(err):
				b.c.opts.logger.Warn("background operation failed", "op", j.name, "err", err)
				b.finish(j, err)
				continue
			}
			b.c.opts.logger.Debug("background operation will be retried", "op", j.name, "err", err)
			d := j.bo.NextBackOff()
			timers.Add(1)
			go func(j *bgJob) {
				defer timers.Done()
				t := time.NewTimer(d)
				defer t.Stop()
				select {
				case <-t.C:
					b.q.push(j)
				case <-ctx.Done():
				}
			}(j)
		}
	}
}

// PendingBackground returns how many background operations (guaranteed
// deletes, protected-node clean-ups) are not done yet.
func (c *Client) PendingBackground() int {
	c.bg.mu.Lock()
	defer c.bg.mu.Unlock()
	return c.bg.pending
}

// WaitBackground waits until every background operation submitted so far
// is done, ctx is done, or the client is closed.
func (c *Client) WaitBackground(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for c.PendingBackground() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return ErrClosed
		case <-t.C:
		}
	}
	return nil
}
