package framework

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// outcome is the result of one attempt run on its own goroutine.
type outcome[T any] struct {
	v   T
	err error
}

// attempt runs fn on its own goroutine so that the caller can stop waiting
// when ctx is done (callPending runs it on the caller's goroutine when ctx
// cannot be cancelled). go-zookeeper calls cannot be cancelled, so an
// abandoned call finishes in the background; pending then yields its real
// outcome (for cleanup).
func attempt[T any](ctx context.Context, conn *zk.Conn, fn func(*zk.Conn) (T, error)) (v T, pending <-chan outcome[T], err error) {
	if err := ctx.Err(); err != nil {
		return v, nil, err
	}
	ch := make(chan outcome[T], 1)
	go func() {
		v, err := fn(conn)
		ch <- outcome[T]{v, err}
	}()
	select {
	case o := <-ch:
		return o.v, nil, o.err
	case <-ctx.Done():
		select {
		case o := <-ch:
			return o.v, nil, o.err
		default:
		}
		return v, ch, ctx.Err()
	}
}

// beforeAttempt, if set (by tests), is called before each attempt.
var beforeAttempt atomic.Pointer[func(c *Client, op string)]

// call runs fn in Curator's retry loop: wait for a connection, try, and on
// a retryable error (connection loss, operation timeout, session moved or
// expired) ask the retry policy whether and when to try again. The client
// waits for a connection once per operation (Curator's
// blockUntilConnectedOrTimedOut): all the attempts of one operation wait at
// most the connection timeout in total. Past it, an attempt while
// disconnected fails at once as a connection loss and the policy decides,
// as the Java client fails a request queued while its connect attempt
// fails (go-zookeeper would queue it until some reconnection). ctx bounds
// the whole loop. Errors come back as *OpError.
func call[T any](c *Client, ctx context.Context, op, path string, fn func(conn *zk.Conn) (T, error)) (T, error) {
	v, _, err := callPending(c, ctx, op, path, fn)
	return v, err
}

// callPending is call that also hands back, when ctx ended an attempt that
// was still in flight, a channel with that attempt's real outcome.
func callPending[T any](c *Client, ctx context.Context, op, path string, fn func(conn *zk.Conn) (T, error)) (v T, pending <-chan outcome[T], err error) {
	// Its frame is on every waiting goroutine's stack at its deepest (issue
	// 16: a thousand waiters' 4 KB stacks): named results, one time.
	if ctx == nil {
		return v, nil, &OpError{op, path, fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)}
	}
	start := time.Now()
	for n := 0; ; n++ {
		var conn *zk.Conn
		conn, err = c.waitConn(ctx, start)
		if err != nil && !errors.Is(err, curator.ErrConnectionLoss) {
			if ctxErr(err) {
				err = c.ended(ctx)
			}
			return v, nil, &OpError{op, path, err}
		}
		if err == nil {
			if h := beforeAttempt.Load(); h != nil {
				(*h)(c, op)
			}
			a := c.startAttempt(ctx, conn, op, path) // telemetry.go
			if ctx.Done() == nil {
				v, err = fn(conn) // not through attempt: one frame less on the deepest stacks
			} else {
				v, pending, err = attempt(ctx, conn, fn)
			}
			c.endAttempt(a, err)
			if err == nil {
				return v, nil, nil
			}
			var zero T
			v = zero
			if pending != nil || ctxErr(err) {
				return v, pending, &OpError{op, path, c.ended(ctx)}
			}
			err = classify(err, c.isClosed())
		}
		if err = c.retryAfter(ctx, &OpError{op, path, err}, n, time.Since(start)); err != nil {
			return v, nil, err
		}
	}
}

// retryAfter asks the retry policy whether to try again after e.Err (the
// n-th attempt's, elapsed into the operation), and sleeps as it says,
// bounded by ctx and the client's life; nil means try again, else the
// operation's error. (Apart from callPending, and with few arguments,
// because its frame is on every waiting goroutine's stack at its deepest.)
//
//go:noinline
func (c *Client) retryAfter(ctx context.Context, e *OpError, n int, elapsed time.Duration) error {
	if !retryable(e.Err) {
		return e
	}
	sleep, ok := c.opts.retryPolicy.Next(n, elapsed)
	if !ok {
		return e
	}
	c.logRetry(e.Op, e.Path, n+1, sleep, e.Err)
	var connected <-chan struct{}
	if sleep <= 0 {
		if !errors.Is(e.Err, errNotConnected) {
			return nil
		}
		// "At once" while disconnected, past the operation's connection
		// wait, would spin: every attempt fails at once. Wait for the
		// connection instead, a connection timeout at most.
		connected, sleep = c.connectedChan(), c.opts.connectionTimeout
	}
	t := time.NewTimer(sleep)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-connected:
		return nil
	case <-ctx.Done():
		return &OpError{e.Op, e.Path, c.ended(ctx)}
	case <-c.ctx.Done():
		return &OpError{e.Op, e.Path, curator.ErrClosed}
	}
}

// connectedChan returns the channel closed at the next connection.
func (c *Client) connectedChan() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connectedCh
}

// logRetry logs a retry; apart from callPending, whose frame every
// waiting goroutine carries, so that its arguments are not on that frame.
//
//go:noinline
func (c *Client) logRetry(op, path string, n int, sleep time.Duration, err error) {
	c.opts.logger.Debug("retrying", "op", op, "path", path, "retry", n, "sleep", sleep, "err", err)
}

// errNotConnected is the cause of an attempt not made: the client was not
// connected and the operation's connection wait was spent.
var errNotConnected = errors.New("not connected within the connection timeout")

// waitConn returns the connection for an attempt: at once when connected,
// else once connected if that happens within the connection timeout from
// start (the operation's start); past it (and still not connected) an
// error wrapping curator.ErrConnectionLoss. curator.ErrClosed on a
// closed client, ctx's error when ctx ends first.
func (c *Client) waitConn(ctx context.Context, start time.Time) (*zk.Conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, curator.ErrClosed
	}
	if c.authErr != nil && !c.connected { // the server refused our credentials
		err := c.authErr
		c.mu.Unlock()
		return nil, err
	}
	if c.connected {
		conn := c.conn
		c.mu.Unlock()
		return conn, nil
	}
	ch, failed := c.connectedCh, c.authFailed
	c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := time.NewTimer(time.Until(start.Add(c.opts.connectionTimeout)))
	defer t.Stop()
	select {
	case <-ch:
	case <-failed:
	case <-t.C:
		return nil, &codedError{curator.ErrConnectionLoss, errNotConnected}
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, curator.ErrClosed
	}
	return c.waitConn(ctx, start)
}

// ended is the error of an operation whose ctx is done: curator.ErrClosed if the
// client was closed (the client's own context, which background work runs
// under, ends with Close: its context.Canceled must not reach callers),
// else ctx's error.
func (c *Client) ended(ctx context.Context) error {
	if c.isClosed() {
		return curator.ErrClosed
	}
	return ctx.Err()
}
