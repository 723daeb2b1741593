package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

type deleteOptions struct {
	version       int32
	guaranteed    bool
	children      bool
	ignoreMissing bool
}

// DeleteOption configures one Delete.
type DeleteOption func(*deleteOptions)

// WithVersion deletes only if the node's version matches (default -1: any).
func WithVersion(v int32) DeleteOption { return func(o *deleteOptions) { o.version = v } }

// Guaranteed is Curator's guaranteed delete: if the delete cannot be
// confirmed for connection reasons (or ctx ends first), the client keeps
// deleting in the background, on every reconnection, until the node is gone
// (zk.ErrNoNode ends it, CURATOR-42) or the client is closed. The caller
// still gets an error (wrapping ErrDeletePending, as *DeletePendingError):
// the delete is not done yet (CURATOR-678), and it can wait for it.
func Guaranteed() DeleteOption { return func(o *deleteOptions) { o.guaranteed = true } }

// WithChildren deletes the node's children first, recursively (Curator's
// deletingChildrenIfNeeded).
func WithChildren() DeleteOption { return func(o *deleteOptions) { o.children = true } }

// IgnoreMissing makes a delete of a node that does not exist succeed
// (Curator's quietly).
func IgnoreMissing() DeleteOption { return func(o *deleteOptions) { o.ignoreMissing = true } }

// Delete deletes a node in the retry loop.
func (c *Client) Delete(ctx context.Context, path string, opts ...DeleteOption) error {
	do := deleteOptions{version: -1}
	for _, o := range opts {
		if o != nil {
			o(&do)
		}
	}
	full, err := c.checkPath("delete", path)
	if err != nil {
		return err
	}
	if path == "/" {
		return &OpError{"delete", path, fmt.Errorf("%w: cannot delete /", ErrInvalidPath)}
	}
	if ctx == nil {
		return &OpError{"delete", path, fmt.Errorf("%w: nil context", ErrInvalidArgument)}
	}
	_, err = call(c, ctx, "delete", path, func(conn *zk.Conn) (struct{}, error) {
		return struct{}{}, deleteTree(conn, full, do.version, do.children)
	})
	if err == nil || (do.ignoreMissing && errors.Is(err, zk.ErrNoNode)) {
		return nil
	}
	if do.guaranteed && (retryable(err) || ctxErr(err)) {
		j := c.deleteInBackgroundJob(path, full, do)
		var oe *OpError
		cause := err
		if errors.As(err, &oe) {
			cause = oe.Err
		}
		return &DeletePendingError{Path: path, Err: cause, job: j, closed: c.ctx.Done()}
	}
	return err
}

// DeleteInBackground is a guaranteed delete that does not wait: the node
// is deleted in the background, retried on every reconnection until it is
// gone, the server refuses it, or the client is closed. It returns at once
// with a handle that tells the outcome. Invalid paths are refused before
// any I/O (the handle is then done at once). Options are those of Delete
// (Guaranteed is implied, a missing node counts as deleted).
func (c *Client) DeleteInBackground(path string, opts ...DeleteOption) *BackgroundDelete {
	do := deleteOptions{version: -1}
	for _, o := range opts {
		if o != nil {
			o(&do)
		}
	}
	full, err := c.checkPath("delete", path)
	if err == nil && path == "/" {
		err = &OpError{"delete", path, fmt.Errorf("%w: cannot delete /", ErrInvalidPath)}
	}
	if err != nil {
		c.opts.logger.Warn("background delete refused", "err", err)
		return &BackgroundDelete{doneJob(err), c.ctx.Done()}
	}
	return &BackgroundDelete{c.deleteInBackgroundJob(path, full, do), c.ctx.Done()}
}

// BackgroundDelete is a delete going on in the background (see
// DeleteInBackground).
type BackgroundDelete struct {
	job    *bgJob
	closed <-chan struct{} // the client's Done
}

// Done returns a channel closed once the delete has ended, whatever its
// outcome (Wait tells it).
func (d *BackgroundDelete) Done() <-chan struct{} { return d.job.done }

// Wait blocks until the delete has ended, the client is closed, or ctx is
// done. It returns nil once the node is gone, the error that ended the
// delete if it was refused (the server's zk.ErrNoAuth, zk.ErrNotEmpty,
// zk.ErrBadVersion...; ErrInvalidPath or ErrInvalidArgument before any I/O),
// ErrClosed if the client was closed first, or ctx's error.
func (d *BackgroundDelete) Wait(ctx context.Context) error { return d.job.wait(ctx, d.closed) }

func (c *Client) deleteInBackgroundJob(path, full string, do deleteOptions) *bgJob {
	return c.bg.submit("guaranteed delete "+path, func(ctx context.Context) error {
		_, err := call(c, ctx, "delete", path, func(conn *zk.Conn) (struct{}, error) {
			return struct{}{}, deleteTree(conn, full, do.version, do.children)
		})
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	})
}

// deleteTree deletes a node, its children first if asked.
func deleteTree(conn *zk.Conn, full string, version int32, children bool) error {
	for {
		if children {
			kids, _, err := conn.Children(full)
			if err != nil {
				return err
			}
			for _, k := range kids {
				if err := deleteTree(conn, JoinPath(full, k), -1, true); err != nil && !errors.Is(err, zk.ErrNoNode) {
					return err
				}
			}
		}
		err := conn.Delete(full, version)
		if children && errors.Is(err, zk.ErrNotEmpty) {
			continue // a child appeared meanwhile
		}
		return err
	}
}

// deleteFull deletes a server path; a missing node counts as deleted.
func (c *Client) deleteFull(ctx context.Context, full string, version int32) error {
	_, err := call(c, ctx, "delete", c.paths.user(full), func(conn *zk.Conn) (struct{}, error) {
		return struct{}{}, conn.Delete(full, version)
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// deleteInBackground deletes a server path in the background until it is gone.
func (c *Client) deleteInBackground(full string) *bgJob {
	return c.bg.submit("delete "+full, func(ctx context.Context) error { return c.deleteFull(ctx, full, -1) })
}
