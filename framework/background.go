package framework

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/gocurator/curator"
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

// doneJob is a job that ended before it started, with err.
func doneJob(err error) *bgJob {
	j := &bgJob{done: make(chan struct{}), err: err}
	close(j.done)
	return j
}

// wait blocks until j is done (its outcome, also after Close if it was
// done before), the client is closed (curator.ErrClosed) or ctx is done
// (ctx's error).
func (j *bgJob) wait(ctx context.Context, closed <-chan struct{}) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)
	}
	if j == nil {
		return fmt.Errorf("%w: no background operation", curator.ErrInvalidArgument)
	}
	select {
	case <-j.done:
		return j.err
	default:
	}
	select {
	case <-closed: // before ctx: a wait on a closed client says so
		return curator.ErrClosed
	default:
	}
	select {
	case <-j.done:
		return j.err
	case <-closed:
		return curator.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// background runs jobs one at a time on one goroutine. Every job submitted
// ends: done, refused, or abandoned (curator.ErrClosed) when the client is closed,
// whether it was queued, waiting to be retried, or submitted after Close.
type background struct {
	c *Client
	q *queue[*bgJob]

	mu        sync.Mutex
	jobs      map[*bgJob]struct{} // submitted, not done
	held      int                 // work announced by hold, not yet submitted
	idle      chan struct{}       // closed while nothing is pending
	reported  int                 // pending as last reported to the telemetry (report)
	closed    bool
	abandoned bool // Close ended work that was not done
}

func newBackground(c *Client) *background {
	idle := make(chan struct{})
	close(idle)
	return &background{c: c, q: newQueue[*bgJob](), jobs: map[*bgJob]struct{}{}, idle: idle}
}

func (b *background) pendingLocked() int { return len(b.jobs) + b.held }

// busyLocked and settleLocked keep idle in step with pendingLocked, around
// a change of it.
func (b *background) busyLocked() {
	if b.pendingLocked() == 0 {
		b.idle = make(chan struct{})
	}
}

func (b *background) settleLocked() {
	if b.pendingLocked() == 0 {
		close(b.idle)
	}
}

// submit queues fn; the job's done channel is closed when it is done. On a
// closed client the job is done at once, with curator.ErrClosed.
func (b *background) submit(name string, fn func(ctx context.Context) error) *bgJob {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = 50 * time.Millisecond
	bo.MaxInterval = time.Second
	bo.MaxElapsedTime = 0 // until done or closed
	j := &bgJob{name: name, fn: fn, bo: bo, done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.abandoned = true
		b.mu.Unlock()
		j.err = curator.ErrClosed
		close(j.done)
		return j
	}
	b.busyLocked()
	b.jobs[j] = struct{}{}
	b.report()
	b.mu.Unlock()
	b.q.push(j)
	return j
}

// hold counts work that will be submitted later as pending; release
// undoes it (after the submit, so that pending never drops to 0 meanwhile).
func (b *background) hold() {
	b.mu.Lock()
	b.busyLocked()
	b.held++
	b.report()
	b.mu.Unlock()
}

func (b *background) release() {
	b.mu.Lock()
	if b.c.isClosed() { // what was held was never submitted
		b.abandoned = true
	}
	b.held--
	b.settleLocked()
	b.report()
	b.mu.Unlock()
}

// finish ends j with err, once.
func (b *background) finish(j *bgJob, err error) {
	b.mu.Lock()
	if _, ok := b.jobs[j]; !ok {
		b.mu.Unlock()
		return
	}
	delete(b.jobs, j)
	if err == curator.ErrClosed {
		b.abandoned = true
	}
	b.settleLocked()
	b.report()
	b.mu.Unlock()
	j.err = err
	close(j.done)
}

// closeAll ends every job not done with curator.ErrClosed, and every later submit.
func (b *background) closeAll() {
	b.mu.Lock()
	b.closed = true
	jobs := make([]*bgJob, 0, len(b.jobs))
	for j := range b.jobs {
		jobs = append(jobs, j)
	}
	if len(jobs) > 0 || b.held > 0 {
		b.abandoned = true
	}
	b.mu.Unlock()
	for _, j := range jobs {
		b.finish(j, curator.ErrClosed)
	}
}

func (b *background) run() {
	ctx := b.c.ctx
	var timers sync.WaitGroup
	defer b.closeAll()
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
				b.finish(j, curator.ErrClosed)
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
// deletes, protected-node clean-ups) are not done yet. It is 0 once the
// client is closed: Close abandons them.
func (c *Client) PendingBackground() int {
	c.bg.mu.Lock()
	defer c.bg.mu.Unlock()
	return c.bg.pendingLocked()
}

// WaitBackground waits until no background operation is pending, the
// client is closed, or ctx is done. It returns nil when every one is done,
// curator.ErrClosed once the client is closed (Close abandons what is
// pending; on a closed client it fails at once, as every call does, even
// with nothing pending or ctx done), or ctx's error.
func (c *Client) WaitBackground(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)
	}
	if c.isClosed() {
		return curator.ErrClosed
	}
	b := c.bg
	b.mu.Lock()
	idle := b.idle
	b.mu.Unlock()
	select {
	case <-idle:
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.abandoned {
			return curator.ErrClosed
		}
		return nil
	case <-c.ctx.Done():
		return curator.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}
