package framework

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/telemetry"
)

// OpError is the error of one ZooKeeper operation: what was done, on which
// path (as the caller named it, without namespace or chroot), and why.
type OpError struct {
	Op   string
	Path string
	Err  error
}

func (e *OpError) Error() string {
	if e.Path == "" {
		return "framework: " + e.Op + ": " + e.Err.Error()
	}
	return "framework: " + e.Op + " " + shortPath(e.Path) + ": " + e.Err.Error()
}

// shortPath keeps error messages short when a path is huge: its first 100
// bytes (whole characters) and its length.
func shortPath(p string) string {
	const keep = 100
	if len(p) <= keep+20 {
		return p
	}
	i := keep
	for i > 0 && !utf8.RuneStart(p[i]) {
		i--
	}
	return fmt.Sprintf("%s...(%d bytes)", p[:i], len(p))
}

func (e *OpError) Unwrap() error { return e.Err }

// DeletePendingError is returned by a guaranteed Delete that failed in the
// foreground for connection reasons: the node may still exist, and the client
// keeps deleting it in the background until it is gone (or the client is
// closed). Wait blocks until then.
type DeletePendingError struct {
	Path   string
	Err    error // the foreground failure
	job    *bgJob
	closed <-chan struct{} // the client's Done
}

func (e *DeletePendingError) Error() string {
	return fmt.Sprintf("framework: delete %s: %v (retrying in the background)", e.Path, e.Err)
}

func (e *DeletePendingError) Unwrap() []error { return []error{curator.ErrDeletePending, e.Err} }

// Wait blocks until the background delete has finished, the client is
// closed, or ctx is done. It returns nil once the node is gone, the error
// that ended the delete if the server refused it (zk.ErrNotEmpty,
// zk.ErrBadVersion, zk.ErrNoAuth...), curator.ErrClosed if the client was closed
// before the delete was done, or ctx's error.
func (e *DeletePendingError) Wait(ctx context.Context) error { return e.job.wait(ctx, e.closed) }

// codedError maps ZooKeeper error codes that go-zookeeper has no sentinel for
// ("unknown error: -4") onto ours, keeping the original in the chain.
type codedError struct {
	sentinel error
	cause    error
}

func (e *codedError) Error() string   { return e.sentinel.Error() + " (" + e.cause.Error() + ")" }
func (e *codedError) Unwrap() []error { return []error{e.sentinel, e.cause} }

// classify turns what go-zookeeper returned into our error vocabulary.
// closed says whether our client has been closed.
func classify(err error, closed bool) error {
	if err == nil {
		return nil
	}
	if closed && (errors.Is(err, zk.ErrClosing) || errors.Is(err, zk.ErrConnectionClosed)) {
		return curator.ErrClosed
	}
	switch errType, _ := telemetry.RawErrorType(err); errType {
	case "CONNECTIONLOSS": // the connection closed or gone, code -4, a failed socket write
		return &codedError{curator.ErrConnectionLoss, err}
	case "OPERATIONTIMEOUT": // code -7
		return &codedError{curator.ErrOperationTimeout, err}
	}
	return err
}

// retryable reports whether the retry loop may try an operation again after
// err (already classified): Curator retries CONNECTIONLOSS, OPERATIONTIMEOUT,
// SESSIONMOVED and SESSIONEXPIRED.
func retryable(err error) bool {
	return errors.Is(err, curator.ErrConnectionLoss) || errors.Is(err, curator.ErrOperationTimeout) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrSessionExpired)
}

// IsRetryable reports whether err is of the kind the retry loop retries
// (connection loss, operation timeout, session moved or expired): the
// operation's outcome is unknown rather than refused.
func IsRetryable(err error) bool { return retryable(err) }
