package leader

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
)

// Selector is Curator's LeaderSelector: while this participant leads, it
// runs a function, and leadership lasts until the function returns (Curator's
// takeLeadership). Its nodes are an InterProcessMutex's
// ("<path>/_c_<uuid>-lock-<seq>", the participant id as data), so Curator
// LeaderSelectors (and InterProcessMutexes) on the same path take turns with
// it.
//
// The function's context is cancelled when leadership can no longer be
// relied on (suspended by default, see WithSuspendPolicy; session lost;
// our node deleted by someone else), by Interrupt, and by Close: the
// function must then return promptly. In Curator terms: every state that
// the connection-state error policy calls an error cancels leadership
// (LeaderSelectorListenerAdapter), and cancellation cannot come too early
// or too late (CURATOR-54, -518): it is one context.
//
// A panic in the function is recovered, and the turn ends as if the
// function had returned it as an error (our node deleted at once, the next
// turn queued or not as below): a *PanicError, with the value and the
// stack, reported through WithOnError (errors.Is curator.ErrPanic).
//
// Each turn is a new campaign: after the function returns, the selector
// takes part again only if WithAutoRequeue was given or Requeue is called
// (Curator's requeue: "queue again" is a flag the selector's one goroutine
// reads, never a shared task slot, CURATOR-73, -518, -671).
type Selector struct {
	participant
	fn func(ctx context.Context) error
	o  options

	mu        sync.Mutex
	started   bool
	closed    bool
	queued    bool          // take part again after this turn
	wake      chan struct{} // Requeue or Close for an idle selector
	interrupt context.CancelCauseFunc
	fnDone    chan struct{} // closed when the running function returns
	done      chan struct{} // the selector's goroutine ended
}

// NewSelector returns a selector with the given participant id on path,
// that runs fn whenever it leads (LeaderSelector(client, path, listener)
// with setId). It does no I/O. A nil client or function, an invalid path,
// an empty id or a bad option gives an error wrapping
// curator.ErrInvalidArgument. Options: WithSuspendPolicy, WithOnEnqueue,
// WithAutoRequeue, WithOnError.
func NewSelector(client *framework.Client, path, id string, fn func(ctx context.Context) error, opts ...Option) (*Selector, error) {
	if fn == nil {
		return nil, fmt.Errorf("leader: %w: nil function", curator.ErrInvalidArgument)
	}
	o, err := buildOptions(opts, "Selector", "WithAutoRequeue", "WithOnError")
	if err != nil {
		return nil, err
	}
	e, err := newEngine(client, path, id, layout.MutexName, telemetry.KindSelector, o)
	if err != nil {
		return nil, err
	}
	return &Selector{participant: participant{e}, fn: fn, o: o, wake: make(chan struct{}, 1), done: make(chan struct{})}, nil
}

// Start makes the selector take part (Curator's start, which queues one
// turn). A second Start fails with curator.ErrBusy, one after Close with
// curator.ErrClosed.
func (s *Selector) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("leader: %s: selector: %w", s.e.path, curator.ErrClosed)
	case s.started:
		return fmt.Errorf("leader: %s: selector already started: %w", s.e.path, curator.ErrBusy)
	}
	s.started, s.queued = true, true
	go s.run()
	return nil
}

// Requeue queues one more turn (Curator's requeue): true if it did, false if
// a turn is queued or under way already. An error wrapping curator.ErrClosed
// if the selector is closed or not started.
func (s *Selector) Requeue() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.started {
		return false, fmt.Errorf("leader: %s: selector not running: %w", s.e.path, curator.ErrClosed)
	}
	if s.queued {
		return false, nil
	}
	s.queued = true
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true, nil
}

// Interrupt cancels the function's context if it is running (Curator's
// interruptLeadership): the turn ends when it returns.
func (s *Selector) Interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interrupt != nil {
		s.interrupt(fmt.Errorf("leader: %s: interrupted: %w", s.e.path, context.Canceled))
	}
}

// HasLeadership reports whether the selector leads now (its function runs
// with a live context).
func (s *Selector) HasLeadership() bool { return s.e.isLeader() }

// Leader, Participants, Observe, FencingToken, GuardedMulti, ID, Path and
// Node are Election's.

// Close stops the selector: a running function's context is cancelled and
// Close waits for it to return before our node is deleted (leadership lasts
// until the function returns, as in Curator: nobody else leads before).
// It returns once every goroutine of the selector has ended. Idempotent.
func (s *Selector) Close() error {
	s.mu.Lock()
	started := s.started
	s.closed = true
	var fnDone chan struct{}
	if s.interrupt != nil {
		s.interrupt(fmt.Errorf("leader: %s: %w", s.e.path, curator.ErrClosed))
		fnDone = s.fnDone
	}
	s.mu.Unlock()
	if fnDone != nil {
		<-fnDone
	}
	err := s.e.close(CloseSilent) // ends a campaign under way
	if started {
		select {
		case s.wake <- struct{}{}:
		default:
		}
		<-s.done
	}
	return err
}

func (s *Selector) report(err error) {
	if s.o.onError != nil {
		s.o.onError(err)
		return
	}
	s.e.client.Logger().Warn("leader: selector", "path", s.e.path, "id", s.e.id, "err", err)
}

// run is the selector's goroutine: one turn after another while queued.
func (s *Selector) run() {
	defer close(s.done)
	var pause backoff
	for {
		s.mu.Lock()
		closed, queued := s.closed, s.queued
		s.mu.Unlock()
		if closed {
			return
		}
		if !queued {
			<-s.wake
			continue
		}
		h, err := s.e.campaignTerm(s.e.closeCtx)
		if err != nil {
			if errors.Is(err, curator.ErrClosed) || s.e.closeCtx.Err() != nil {
				return
			}
			s.report(err)
			if pause.wait(s.e.closeCtx) != nil {
				return
			}
			continue
		}
		pause.reset()
		if testHookWon != nil {
			testHookWon()
		}
		fctx, cancel := context.WithCancelCause(h.Context())
		fnDone := make(chan struct{})
		s.mu.Lock()
		if s.closed {
			// Close came between the win and here: it found no function
			// to wait for, and its engine close has let the term go, so
			// someone else may lead already. The function does not run.
			s.mu.Unlock()
			cancel(nil)
			return
		}
		s.interrupt, s.fnDone = cancel, fnDone
		s.mu.Unlock()
		ferr := s.call(fctx)
		close(fnDone)
		s.mu.Lock()
		s.interrupt, s.fnDone = nil, nil
		s.queued = s.o.autoRequeue
		s.mu.Unlock()
		cancel(nil)
		if ferr != nil {
			s.report(fmt.Errorf("leader: %s: the leader's function: %w", s.e.path, ferr))
		}
		rctx, rcancel := recipe.CleanupContext(context.Background())
		rerr := s.e.resign(rctx)
		rcancel()
		if rerr != nil && !errors.Is(rerr, curator.ErrNotHeld) && !errors.Is(rerr, curator.ErrClosed) {
			s.report(rerr)
		}
	}
}

// call runs the function; a panic in it is recovered into a *PanicError,
// so that the turn ends as if it had returned that error.
func (s *Selector) call(ctx context.Context) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return s.fn(ctx)
}

// testHookWon, set only by tests, runs on the selector's goroutine when it
// has won a term, before it runs the function.
var testHookWon func()

// PanicError is the error a Selector reports (WithOnError) when its
// function panics: it wraps curator.ErrPanic, and the panic's value if
// that is an error.
type PanicError struct {
	Value any    // what the function panicked with
	Stack []byte // the stack of the panic (runtime/debug.Stack)
}

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v\n\n%s", p.Value, p.Stack) }

// Is reports whether target is curator.ErrPanic.
func (p *PanicError) Is(target error) bool { return target == curator.ErrPanic }

// Unwrap returns the panic's value if it is an error, else nil.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}
