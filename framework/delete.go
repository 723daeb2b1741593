package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// Delete deletes a node in the retry loop. Options: WithVersion,
// WithGuarantee, WithChildren, WithIgnoreMissing.
func (c *Client) Delete(ctx context.Context, path string, opts ...OpOption) error {
	do, full, err := c.planDelete(path, opts)
	if err != nil {
		return err
	}
	if ctx == nil {
		return &OpError{"delete", path, fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)}
	}
	err = c.deleteNode(ctx, path, full, do)
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
// (WithGuarantee is implied, a missing node counts as deleted).
func (c *Client) DeleteInBackground(path string, opts ...OpOption) *BackgroundDelete {
	do, full, err := c.planDelete(path, opts)
	if err != nil {
		c.opts.logger.Warn("background delete refused", "err", err)
		return &BackgroundDelete{doneJob(err), c.ctx.Done()}
	}
	return &BackgroundDelete{c.deleteInBackgroundJob(path, full, do), c.ctx.Done()}
}

// planDelete checks a delete's options and path before any I/O (Delete,
// DeleteInBackground): the options and the server path, or the refusal.
func (c *Client) planDelete(path string, opts []OpOption) (opOptions, string, error) {
	do, err := opOpts("delete", deleteOpts, opts)
	if err != nil {
		return do, "", &OpError{"delete", path, err}
	}
	full, err := c.checkPath("delete", path)
	if err != nil {
		return do, "", err
	}
	if path == "/" {
		return do, "", &OpError{"delete", path, fmt.Errorf("%w: cannot delete /", curator.ErrInvalidPath)}
	}
	return do, full, nil
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
// zk.ErrBadVersion...; curator.ErrInvalidPath or curator.ErrInvalidArgument before any I/O),
// curator.ErrClosed if the client was closed first, or ctx's error.
func (d *BackgroundDelete) Wait(ctx context.Context) error { return d.job.wait(ctx, d.closed) }

func (c *Client) deleteInBackgroundJob(path, full string, do opOptions) *bgJob {
	return c.bg.submit("guaranteed delete "+path, func(ctx context.Context) error {
		err := c.deleteNode(ctx, path, full, do)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	})
}

// deleteNode deletes the node at the server path full (path as the caller
// named it) in the retry loop, as do asks.
func (c *Client) deleteNode(ctx context.Context, path, full string, do opOptions) error {
	var found bool // across the loop's attempts (deleteTree)
	_, err := call(c, ctx, "delete", path, func(conn *zk.Conn) (struct{}, error) {
		return struct{}{}, deleteTree(conn, full, do.version, do.children, &found)
	})
	return err
}

// deleteTree deletes a node, its children first if asked. With children,
// *found (kept across the retry loop's attempts) is set once the node was
// found there; a node gone after that is deleted as asked, whoever deleted
// it: the server, reaping a container we emptied; another deleter; our own
// delete whose reply the connection lost (Curator's ZKPaths.deleteChildren
// ignores NoNode there too). A node missing from the start is zk.ErrNoNode.
func deleteTree(conn *zk.Conn, full string, version int32, children bool, found *bool) error {
	for {
		if children {
			kids, _, err := conn.Children(full)
			if errors.Is(err, zk.ErrNoNode) && *found {
				return nil
			}
			if err != nil {
				return err
			}
			*found = true
			for _, k := range kids {
				var kidFound bool
				if err := deleteTree(conn, JoinPath(full, k), -1, true, &kidFound); err != nil && !errors.Is(err, zk.ErrNoNode) {
					return err
				}
			}
		}
		err := conn.Delete(full, version)
		switch {
		case children && errors.Is(err, zk.ErrNotEmpty):
			continue // a child appeared meanwhile
		case children && errors.Is(err, zk.ErrNoNode):
			return nil // found above: gone since
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
