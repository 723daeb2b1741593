package main

import (
	"errors"
	"fmt"

	"github.com/gocurator/curator/internal/inspect"
)

// fail reports err, met while working on path, in the operator's words, and
// returns the exit status.
func (c *cli) fail(conn *connFlags, path string, err error) int {
	where := path
	if conn.namespace != "" {
		where = fmt.Sprintf("%s (in namespace %s)", path, conn.namespace)
	}
	var ue usageError
	switch {
	case errors.As(err, &ue):
		return c.errorf(exitUsage, "%v", ue.error)
	case c.ctx.Err() != nil:
		return c.errorf(exitFailure, "interrupted")
	case inspect.IsNotFound(err), errors.Is(err, errPathMissing):
		return c.errorf(exitFailure, "%s does not exist", where)
	case inspect.IsNoAuth(err):
		return c.errorf(exitFailure, "permission denied on %s: the node's ACL refuses this client (pass --auth, e.g. --auth digest:user:password): %v", where, err)
	case inspect.IsBadInput(err):
		return c.errorf(exitUsage, "%v", err)
	case inspect.IsUnreachable(err):
		return c.errorf(exitFailure, "no answer from ZooKeeper at %s within %v (working on %s): %v", conn.connect, conn.timeout, where, err)
	}
	return c.errorf(exitFailure, "%s: %v", where, err)
}

// dialFailed reports a failure to connect.
func (c *cli) dialFailed(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return c.errorf(exitUsage, "%v", ue.error)
	}
	return c.errorf(exitFailure, "%v", err)
}
