package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/internal/telemetry"
)

// engine is one participant of an election: its node in the queue, its
// terms of leadership and its watchers. One goroutine, the owner (run),
// holds and changes all of its state; the rest of the world talks to it
// through commands, and the goroutines it starts (an attempt to lead, the
// watch of a term's end) report back through events stamped with the
// generation they were started in. Every change of the participant's
// course (a new attempt, a term ended, Resign, Close) starts a new
// generation, so a report of an older one is inert: it can neither make a
// leader nor end a term (what Curator's LeaderLatch lacked: CURATOR-504,
// -620, -644, -653).
type engine struct {
	client *framework.Client
	d      *driver.Driver
	path   string
	id     string
	data   []byte
	opts   options
	tel    telemetry.Recipe
	// rejoin: after a term ends other than by Resign or Close, take part
	// again at once, keeping our node if its session lives (the Latch).
	rejoin bool
	// notify, if not nil, is told of each change of leadership, on the
	// owner goroutine (the Latch's listeners queue it).
	notify func(leading bool)

	cmds   chan cmd
	events chan event
	quit   chan struct{} // closed when the owner goroutine has ended

	closeCtx    context.Context // ended by Close: attempts, observers
	closeCancel context.CancelFunc
	bg          sync.WaitGroup // observers and clean-ups; Close waits for them

	mu      sync.Mutex
	started bool
	closed  bool
	term    *driver.Hold  // the current term, nil when not leading
	node    string        // our node, "" when none
	changed chan struct{} // closed and replaced at every change of term or node
}

// newEngine checks the arguments (no I/O) and returns a participant whose
// nodes are named name ("latch-" or "lock-").
func newEngine(client *framework.Client, path, id, name string, kind telemetry.Kind, o options) (*engine, error) {
	if err := recipe.CheckArgs(client, "election", path); err != nil {
		return nil, fmt.Errorf("leader: %w", err)
	}
	if id == "" {
		// Curator allows "" (and writes empty data): a leader nobody can
		// name. We refuse it: Leader, Participants and Observe say who leads.
		return nil, fmt.Errorf("leader: %w: empty participant id", curator.ErrInvalidArgument)
	}
	if !utf8.ValidString(id) {
		return nil, fmt.Errorf("leader: %w: participant id %q is not UTF-8 (Curator reads it as UTF-8)", curator.ErrInvalidArgument, id)
	}
	d, err := driver.New(client, path, name, driver.MaxLeases(1))
	if err != nil {
		return nil, fmt.Errorf("leader: %w", err)
	}
	e := &engine{client: client, d: d, path: path, id: id, data: []byte(id), opts: o, tel: telemetry.ForClient(client).Recipe(kind, path),
		cmds: make(chan cmd), events: make(chan event), quit: make(chan struct{}), changed: make(chan struct{})}
	e.closeCtx, e.closeCancel = context.WithCancel(context.Background())
	return e, nil
}

type cmdKind int

const (
	cmdCampaign cmdKind = iota // once: take part until leading, reply with the term
	cmdJoin                    // rejoin: take part until Close, reply at once
	cmdResign
	cmdClose
)

type cmd struct {
	kind  cmdKind
	ctx   context.Context
	mode  CloseMode
	reply chan reply // buffered (1)
}

type reply struct {
	hold *driver.Hold // Campaign: the term; Resign, Close: the term to release
	err  error
}

type evKind int

const (
	evWon    evKind = iota // an attempt leads: c, token
	evFailed               // an attempt ended without leading: err
	evLost                 // a term was lost
	evRetry                // the pause after a failed attempt is over (rejoin)
)

type event struct {
	gen   uint64
	kind  evKind
	c     *driver.Contender
	token int64
	err   error
}

// state is the owner goroutine's own.
type state struct {
	gen     uint64
	c       *driver.Contender  // our node, while we take part
	att     *run               // the attempt under way, if any
	hold    *driver.Hold       // the current term, if any
	held    *telemetry.Holding // the current term, as the telemetry records it
	waiter  chan reply         // the Campaign waiting for a term
	joined  bool               // taking part (a Campaign or a started Latch)
	closed  bool
	pause   backoff // between failed attempts (rejoin)
	retryAt *timer
}

// run is one attempt to lead, as the owner sees it.
type run struct {
	gen    uint64
	cancel context.CancelFunc
	acq    *telemetry.Acquisition
}

// testHookEvent, set only by tests, runs on the owner goroutine before it
// handles each event, with the event's kind and whether it is stale.
var testHookEvent func(kind evKind, stale bool)

// start starts the owner goroutine once; false if the engine is closed.
func (e *engine) start() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	if !e.started {
		e.started = true
		go e.run()
	}
	return true
}

func (e *engine) errClosed() error {
	return fmt.Errorf("leader: %s: %w", e.path, curator.ErrClosed)
}

// clientClosed reports whether the client is closed: nobody can take part
// on it any more.
func (e *engine) clientClosed() bool {
	select {
	case <-e.client.Done():
		return true
	default:
		return false
	}
}

// send gives the owner a command and waits for its reply.
func (e *engine) send(m cmd) reply {
	if !e.start() {
		return reply{err: e.errClosed()}
	}
	m.reply = make(chan reply, 1)
	select {
	case e.cmds <- m:
	case <-e.quit:
		return reply{err: e.errClosed()}
	}
	select {
	case r := <-m.reply:
		return r
	case <-e.quit:
		select {
		case r := <-m.reply:
			return r
		default:
			return reply{err: e.errClosed()}
		}
	}
}

// post hands the owner an event, unless it has ended.
func (e *engine) post(ev event) {
	select {
	case e.events <- ev:
	case <-e.quit:
	}
}

// run is the owner goroutine: it ends once closed and its attempt is over.
func (e *engine) run() {
	defer close(e.quit)
	var s state
	for !(s.closed && s.att == nil) {
		select {
		case m := <-e.cmds:
			e.command(&s, m)
		case ev := <-e.events:
			e.event(&s, ev)
		}
	}
	s.retryAt.stop()
}

func (e *engine) command(s *state, m cmd) {
	if s.closed {
		m.reply <- reply{err: e.errClosed()}
		return
	}
	if !e.rejoin && s.hold != nil && s.hold.IsLost() && m.kind != cmdClose {
		// The term was lost and its event is on its way: settle it now, so
		// that a Campaign right after the loss is not refused as busy.
		s.gen++ // the event is stale now
		e.termLost(s)
	}
	switch m.kind {
	case cmdCampaign:
		switch {
		case s.hold != nil && !s.hold.IsLost():
			m.reply <- reply{hold: s.hold} // leading already: this term
		case s.waiter != nil || s.joined:
			m.reply <- reply{err: fmt.Errorf("leader: %s: a Campaign is under way: %w", e.path, curator.ErrBusy)}
		default:
			s.joined, s.waiter = true, m.reply
			e.attempt(s, m.ctx)
		}
	case cmdJoin:
		if s.joined {
			m.reply <- reply{err: fmt.Errorf("leader: %s: latch already started: %w", e.path, curator.ErrBusy)}
			return
		}
		s.joined = true
		e.attempt(s, e.closeCtx)
		m.reply <- reply{}
	case cmdResign:
		if s.hold == nil || s.hold.IsLost() {
			m.reply <- reply{err: fmt.Errorf("leader: %s: resign: not the leader: %w", e.path, curator.ErrNotHeld)}
			return
		}
		h := s.hold
		s.gen++ // the term's watch is stale from now on
		s.held.Released(telemetry.ReleaseReleased)
		s.hold, s.held, s.c, s.joined = nil, nil, nil, false
		e.publish(s)
		e.tell(false)
		m.reply <- reply{hold: h}
	case cmdClose:
		s.closed = true
		s.gen++
		s.retryAt.stop()
		if s.att != nil {
			s.att.cancel() // it deletes its node before it reports
		}
		if s.waiter != nil {
			s.waiter <- reply{err: e.errClosed()}
			s.waiter = nil
		}
		h := s.hold
		switch {
		case h != nil && h.IsLost():
			// Lost, its event not handled yet, and never to be now that
			// the owner ends: the loss is told here, as termLost tells it,
			// whatever the mode (the hold recorded it).
			e.tell(false)
		case h != nil && m.mode == CloseNotifyLeader:
			e.tell(false)
			fallthrough
		default:
			s.held.Released(telemetry.ReleaseClosed)
		}
		s.hold, s.held, s.c, s.joined = nil, nil, nil, false
		e.publish(s)
		m.reply <- reply{hold: h}
	}
}

func (e *engine) event(s *state, ev event) {
	stale := ev.gen != s.gen
	if s.att != nil && ev.gen == s.att.gen && (ev.kind == evWon || ev.kind == evFailed) {
		endAttempt(s.att.acq, ev, stale) // telemetry.go
		s.att = nil                      // that attempt is over
	}
	if testHookEvent != nil {
		testHookEvent(ev.kind, stale)
	}
	if stale {
		if ev.kind == evWon { // it led too late: Resign or Close came first
			e.cleanup(ev.c)
		}
		return
	}
	switch ev.kind {
	case evWon:
		s.pause.reset()
		s.c = ev.c
		s.hold = ev.c.Hold(e.closeCtx, driver.HoldOptions{
			Policy: e.opts.Policy, WatchNode: true, KeepOnLoss: e.rejoin, Token: ev.token})
		s.held = holding(e.tel, s.hold) // telemetry.go
		e.watchTerm(s.gen, s.hold)
		e.publish(s)
		e.tell(true)
		if s.waiter != nil {
			s.waiter <- reply{hold: s.hold}
			s.waiter = nil
		}
	case evFailed:
		s.c = nil
		e.publish(s)
		if s.waiter != nil {
			s.waiter <- reply{err: ev.err}
			s.waiter = nil
			s.joined = false
			return
		}
		// A latch takes part until it is closed: try again after a pause,
		// unless its client is closed (Await says so).
		if e.clientClosed() {
			return
		}
		e.client.Logger().Warn("leader: taking part in the election failed; trying again", "path", e.path, "id", e.id, "err", ev.err)
		gen := s.gen
		s.retryAt = startTimer(s.pause.next(), func() { e.post(event{gen: gen, kind: evRetry}) })
	case evRetry:
		if s.joined && s.att == nil && s.hold == nil {
			e.attempt(s, e.closeCtx)
		}
	case evLost:
		e.termLost(s)
	}
}

// termLost ends the current term, lost.
func (e *engine) termLost(s *state) {
	h := s.hold
	s.hold, s.held = nil, nil // its loss is recorded by the hold (telemetry.go)
	e.forget(h)
	e.tell(false)
	if !e.rejoin {
		// The term is over and our node is gone or going (the hold
		// deletes it): Campaign again to take part again.
		s.c, s.joined = nil, false
		e.publish(s)
		return
	}
	// The Latch takes part on: on the same node if its session lives
	// (suspended, then reconnected: Curator's latch keeps its node and
	// re-checks), else on a new one.
	if h.Contender().Session().Lost() {
		s.c = nil
	}
	e.publish(s)
	e.attempt(s, e.closeCtx)
}

// attempt starts an attempt to lead, in a new generation, with our current
// node (nil: a new one), bounded by ctx and Close.
func (e *engine) attempt(s *state, ctx context.Context) {
	s.gen++
	gen, c := s.gen, s.c
	ctx, acq := e.tel.StartAcquire(ctx)
	actx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(e.closeCtx, cancel)
	s.att = &run{gen: gen, cancel: cancel, acq: acq}
	go func() {
		defer cancel()
		defer stop()
		c, token, err := e.campaign(actx, c)
		if err != nil {
			e.post(event{gen: gen, kind: evFailed, err: err})
			return
		}
		e.post(event{gen: gen, kind: evWon, c: c, token: token})
	}()
}

// watchTerm reports the loss of the term h of generation gen; Close waits
// for it.
func (e *engine) watchTerm(gen uint64, h *driver.Hold) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		// The held context ends on release (Resign, Close) and on loss:
		// the hold ends it before it closes Lost, and IsLost reads its cause.
		<-h.Context().Done()
		if testHookTermEnded != nil {
			testHookTermEnded()
		}
		if h.IsLost() {
			e.post(event{gen: gen, kind: evLost})
		}
	}()
}

// testHookTermEnded, set only by tests, runs in watchTerm once the term's
// context has ended, before it reports a loss.
var testHookTermEnded func()

// cleanup deletes the node of an attempt that led too late, off the owner
// goroutine; Close waits for it.
func (e *engine) cleanup(c *driver.Contender) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		c.DeleteQuietly(e.closeCtx)
	}()
}

// forget ends the monitor of a lost term's hold, which nobody releases
// (its loss dealt with its node), off the owner goroutine; Close waits for
// it. Kept, its callbacks would stay on the session: one more for every
// term lost in a long session.
func (e *engine) forget(h *driver.Hold) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		h.Forget()
	}()
}

// publish makes the owner's state visible to readers (IsLeader, Await).
func (e *engine) publish(s *state) {
	node := ""
	if s.c != nil {
		node = s.c.Node()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.term, e.node = s.hold, node
	if s.closed {
		e.closed = true
	}
	close(e.changed)
	e.changed = make(chan struct{})
}

func (e *engine) tell(leading bool) {
	if e.notify != nil {
		e.notify(leading)
	}
}

// current returns the current term (nil when not leading, or lost), whether
// the engine is closed, and a channel closed at the next change.
func (e *engine) current() (*driver.Hold, bool, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.term
	if t != nil && t.IsLost() {
		t = nil
	}
	return t, e.closed, e.changed
}

func (e *engine) isLeader() bool {
	t, _, _ := e.current()
	return t != nil
}

func (e *engine) ourNode() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.node
}

// held returns the current term or an error wrapping curator.ErrNotHeld.
func (e *engine) held() (*driver.Hold, error) {
	e.mu.Lock()
	t := e.term
	e.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("leader: %s: not the leader: %w", e.path, curator.ErrNotHeld)
	}
	return t, nil
}

// campaignTerm takes part until leading (once): the term's context.
func (e *engine) campaignTerm(ctx context.Context) (*driver.Hold, error) {
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("leader: %s: campaign: %w", e.path, err)
	}
	r := e.send(cmd{kind: cmdCampaign, ctx: ctx})
	return r.hold, r.err
}

// resign ends the current term: its node deleted, its context ended.
func (e *engine) resign(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	r := e.send(cmd{kind: cmdResign})
	if r.err != nil {
		return r.err
	}
	ctx, rel := e.tel.StartRelease(ctx)
	err := r.hold.ReleaseCause(ctx, fmt.Errorf("leader: %s: resigned: %w", e.path, context.Canceled))
	rel.End(err)
	if err != nil {
		return fmt.Errorf("leader: resign: %w", err)
	}
	return nil
}

// close ends everything: the attempt (its node deleted), the term
// (released), the observers; it returns once every goroutine of the engine
// has ended. Idempotent.
func (e *engine) close(mode CloseMode) error {
	e.mu.Lock()
	if e.closed || !e.started {
		if !e.closed { // never started: no owner to publish it, so here
			e.closed = true
			close(e.changed) // an Await before Start hears it
			e.changed = make(chan struct{})
		}
		e.mu.Unlock()
		e.closeCancel()
		<-e.waitAll()
		return nil
	}
	e.mu.Unlock()
	r := e.send(cmd{kind: cmdClose, mode: mode})
	e.closeCancel()
	var err error
	if r.hold != nil {
		ctx, cancel := recipe.CleanupContext(context.Background())
		defer cancel()
		ctx, rel := e.tel.StartRelease(ctx)
		err = r.hold.ReleaseCause(ctx, fmt.Errorf("leader: %s: %w", e.path, curator.ErrClosed))
		rel.End(err)
		if errors.Is(err, curator.ErrLockLost) {
			err = nil // leadership had been lost before Close: nothing the caller can act on now
		}
	}
	<-e.waitAll()
	if err != nil {
		return fmt.Errorf("leader: close: %w", err)
	}
	return nil
}

// waitAll is closed once the owner and every background goroutine ended.
func (e *engine) waitAll() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		e.mu.Lock()
		started := e.started
		e.mu.Unlock()
		if started {
			<-e.quit
		}
		e.bg.Wait()
		close(ch)
	}()
	return ch
}
