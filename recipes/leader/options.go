package leader

import (
	"fmt"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/recipe"
)

// Option configures an Election, a Latch or a Selector. A bad option (a nil
// function, an unknown policy or mode, an option of another type) makes the
// constructor fail with an error wrapping curator.ErrInvalidArgument.
type Option func(*options)

type options struct {
	recipe.Options // Policy and OnEnqueue; a node's data is always the participant id

	closeMode   CloseMode
	autoRequeue bool
	onError     func(error)
	given       map[string]bool // which type-specific options were given
}

// CloseMode says whether closing a leading Latch calls its listeners'
// NotLeader (Curator's LeaderLatch.CloseMode).
type CloseMode int

const (
	// CloseSilent (the default): Close calls no listener.
	CloseSilent CloseMode = iota
	// CloseNotifyLeader: Close of the leader calls NotLeader.
	CloseNotifyLeader
)

func (m CloseMode) String() string {
	switch m {
	case CloseSilent:
		return "SILENT"
	case CloseNotifyLeader:
		return "NOTIFY_LEADER"
	}
	return "CloseMode(?)"
}

// valid reports whether m is one of the close modes.
func (m CloseMode) valid() bool { return m == CloseSilent || m == CloseNotifyLeader }

// WithSuspendPolicy sets when leadership counts as lost (default
// curator.LoseOnSuspend: as soon as the connection is suspended, before the
// server may expire the session; curator.LoseOnLost: only once the client
// declares the session lost, which it does no later than the server can
// expire it (counted from the sending of its last answered request), yet
// the news reaches the leader's code a moment later: use the fencing
// token).
func WithSuspendPolicy(p curator.SuspendPolicy) Option { return func(o *options) { o.SetPolicy(p) } }

// WithOnEnqueue calls fn with the path of each node the participant makes,
// as soon as it is made (a participant is visible while it waits). fn runs
// on the participant's goroutine and should return quickly. Default: none.
func WithOnEnqueue(fn func(node string)) Option { return func(o *options) { o.SetOnEnqueue(fn) } }

// WithCloseMode sets the Latch's close mode (default CloseSilent). Latch
// only.
func WithCloseMode(m CloseMode) Option {
	return func(o *options) {
		o.mark("WithCloseMode")
		if !m.valid() {
			o.Fail("unknown close mode %d", m)
		}
		o.closeMode = m
	}
}

// WithAutoRequeue makes a Selector take part again after every term
// (Curator's autoRequeue): once its function returns, or leadership is
// lost, it queues anew at the end of the line. Selector only.
func WithAutoRequeue() Option {
	return func(o *options) { o.mark("WithAutoRequeue"); o.autoRequeue = true }
}

// WithOnError calls fn with every error a Selector meets in the background:
// its function's errors and panics (a *PanicError, wrapping
// curator.ErrPanic) and failed attempts to take part (which it retries
// with a pause). Default: logged by the client's logger. Selector only.
func WithOnError(fn func(error)) Option {
	return func(o *options) {
		o.mark("WithOnError")
		if fn == nil {
			o.Fail("nil WithOnError function")
		}
		o.onError = fn
	}
}

func (o *options) mark(name string) {
	if o.given == nil {
		o.given = map[string]bool{}
	}
	o.given[name] = true
}

// buildOptions applies opts and refuses those not in allowed.
func buildOptions(opts []Option, what string, allowed ...string) (options, error) {
	var o options
	if err := recipe.Apply(&o, opts); err != nil {
		return o, fmt.Errorf("leader: %w", err)
	}
	for name := range o.given {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			return o, fmt.Errorf("leader: %w: %s does not apply to a %s", curator.ErrInvalidArgument, name, what)
		}
	}
	return o, nil
}
