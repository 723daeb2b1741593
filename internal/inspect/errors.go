package inspect

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
)

// Every test of an error against a sentinel is here, one helper each.

// IsNotFound: the node does not exist.
func IsNotFound(err error) bool { return errors.Is(err, zk.ErrNoNode) }

// IsNoAuth: the server refused the read or write (the node's ACL).
func IsNoAuth(err error) bool {
	return errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrAuthFailed)
}

// IsBadInput: the client refused a path or argument before any I/O.
func IsBadInput(err error) bool {
	return errors.Is(err, curator.ErrInvalidArgument) // ErrInvalidPath is one
}

// IsUnreachable: no answer from the server in time (connection loss,
// operation timeout, the deadline).
func IsUnreachable(err error) bool {
	return errors.Is(err, curator.ErrConnectionLoss) || errors.Is(err, curator.ErrOperationTimeout) ||
		errors.Is(err, curator.ErrSessionLost) || errors.Is(err, context.DeadlineExceeded)
}
