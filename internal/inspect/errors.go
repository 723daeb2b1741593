package inspect

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// Every test of an error against a sentinel is here, one helper each, so
// that the sentinels can move (the framework's are moving to the root
// package) without a hunt through the code.

// IsNotFound: the node does not exist.
func IsNotFound(err error) bool { return errors.Is(err, zk.ErrNoNode) }

// IsNoAuth: the server refused the read or write (the node's ACL).
func IsNoAuth(err error) bool {
	return errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrAuthFailed)
}

// IsClosed: the client was closed.
func IsClosed(err error) bool { return errors.Is(err, framework.ErrClosed) }

// IsBadInput: the client refused a path or argument before any I/O.
func IsBadInput(err error) bool {
	return errors.Is(err, framework.ErrInvalidPath) || errors.Is(err, framework.ErrInvalidArgument)
}

// IsUnreachable: no answer from the server in time (connection loss,
// operation timeout, the deadline).
func IsUnreachable(err error) bool {
	return errors.Is(err, framework.ErrConnectionLoss) || errors.Is(err, framework.ErrOperationTimeout) ||
		errors.Is(err, framework.ErrSessionLost) || errors.Is(err, context.DeadlineExceeded)
}
