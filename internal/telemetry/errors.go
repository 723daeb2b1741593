package telemetry

import (
	"context"
	"errors"

	"github.com/gocurator/curator"
)

// OutcomeOf is the outcome of an acquisition that returned err, and for
// OutcomeError its error.type.
func OutcomeOf(err error) (Outcome, string) {
	switch {
	case err == nil:
		return OutcomeAcquired, ""
	case errors.Is(err, curator.ErrLocked):
		return OutcomeLocked, ""
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout, ""
	case errors.Is(err, context.Canceled):
		return OutcomeCanceled, ""
	}
	return OutcomeError, ErrorType(err)
}

// recipeErrors are the module's sentinels and their error.type, most
// specific first (a vanished node may also wrap a lost session).
var recipeErrors = []struct {
	err  error
	name string
}{
	{curator.ErrLockLost, "lock_lost"},
	{curator.ErrNodeVanished, "node_vanished"},
	{curator.ErrSessionLost, "session_lost"},
	{curator.ErrClosed, "closed"},
	{curator.ErrLocked, "locked"},
	{curator.ErrNotHeld, "not_held"},
	{curator.ErrUpgrade, "upgrade"},
	{curator.ErrBusy, "busy"},
	{curator.ErrContention, "contention"},
	{curator.ErrCorrupt, "corrupt"},
	{curator.ErrInvalidArgument, "invalid_argument"},
	{curator.ErrConnectionLoss, "CONNECTIONLOSS"},
	{curator.ErrOperationTimeout, "OPERATIONTIMEOUT"},
	{errors.ErrUnsupported, "unsupported"},
}

// ErrorType is the error.type of a recipe's error: the module's sentinel
// it wraps (lock_lost, node_vanished, session_lost, closed...), else
// ZooKeeper's error name, timeout or canceled, else _OTHER. A small, fixed
// vocabulary: it is a metric attribute.
func ErrorType(err error) string {
	for _, e := range recipeErrors {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	t, _ := ZKErrorType(err)
	return t
}
