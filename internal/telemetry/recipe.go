package telemetry

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// The recipes' metric names (see framework's package documentation).
const (
	MetricAcquireDuration = "curator.lock.acquire.duration"
	MetricHoldDuration    = "curator.lock.hold.duration"
	MetricHeld            = "curator.lock.held"
	MetricWaiting         = "curator.lock.waiting"
	MetricLosses          = "curator.lock.losses"
)

// Attribute keys of the recipes.
const (
	KeyRecipe        = attribute.Key("curator.recipe")
	KeyOutcome       = attribute.Key("curator.lock.outcome")
	KeyReleaseReason = attribute.Key("curator.lock.release.reason")
	KeyLossReason    = attribute.Key("curator.loss.reason")
	KeyPath          = attribute.Key("curator.path")
	KeySequence      = attribute.Key("curator.node.sequence")
)

// Kind is a recipe kind, the value of curator.recipe.
type Kind uint8

// The recipe kinds.
const (
	KindMutex          Kind = iota // locks.Mutex
	KindRead                       // locks.ReadWriteLock's read half
	KindWrite                      // locks.ReadWriteLock's write half
	KindSemaphore                  // a semaphore.Semaphore's lease
	KindSemaphoreMutex             // semaphore.Mutex
	KindMultiLock                  // multilock.MultiLock
	KindElection                   // leader.Election
	KindLatch                      // leader.Latch
	KindSelector                   // leader.Selector
	numKinds
)

type scopeID uint8

const (
	scopeLocks scopeID = iota
	scopeSemaphore
	scopeMultiLock
	scopeLeader
	numScopes
)

var scopeNames = [numScopes]string{ScopeLocks, ScopeSemaphore, ScopeMultiLock, ScopeLeader}

// Span names.
const (
	SpanLockAcquire      = "curator.lock.acquire"
	SpanLockRelease      = "curator.lock.release"
	SpanSemaphoreAcquire = "curator.semaphore.acquire"
	SpanSemaphoreRelease = "curator.semaphore.release"
	SpanLeaderCampaign   = "curator.leader.campaign"
	SpanLeaderRelease    = "curator.leader.release"
)

var kinds = [numKinds]struct {
	name             string
	scope            scopeID
	acquire, release string // span names
}{
	KindMutex:          {"mutex", scopeLocks, SpanLockAcquire, SpanLockRelease},
	KindRead:           {"read", scopeLocks, SpanLockAcquire, SpanLockRelease},
	KindWrite:          {"write", scopeLocks, SpanLockAcquire, SpanLockRelease},
	KindSemaphore:      {"semaphore", scopeSemaphore, SpanSemaphoreAcquire, SpanSemaphoreRelease},
	KindSemaphoreMutex: {"semaphore_mutex", scopeSemaphore, SpanLockAcquire, SpanLockRelease},
	KindMultiLock:      {"multi_lock", scopeMultiLock, SpanLockAcquire, SpanLockRelease},
	KindElection:       {"election", scopeLeader, SpanLeaderCampaign, SpanLeaderRelease},
	KindLatch:          {"latch", scopeLeader, SpanLeaderCampaign, SpanLeaderRelease},
	KindSelector:       {"selector", scopeLeader, SpanLeaderCampaign, SpanLeaderRelease},
}

func (k Kind) String() string { return kinds[k].name }

// Outcome is the outcome of an acquisition (curator.lock.outcome).
type Outcome uint8

// The outcomes.
const (
	OutcomeAcquired Outcome = iota
	OutcomeLocked           // a Try found it held (curator.ErrLocked)
	OutcomeTimeout          // the context's deadline passed
	OutcomeCanceled         // the context was cancelled (or the recipe closed while waiting)
	OutcomeError            // anything else; error.type says what
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"acquired", "locked", "timeout", "canceled", "error"}

func (o Outcome) String() string { return outcomeNames[o] }

// ReleaseReason is how a holding ended (curator.lock.release.reason).
type ReleaseReason uint8

// The release reasons.
const (
	ReleaseReleased ReleaseReason = iota // released (Unlock, Release, Resign, a selector's function returned)
	ReleaseLost                          // lost (see LossReason)
	ReleaseClosed                        // the recipe was closed while holding (leader)
	numReleases
)

var releaseNames = [numReleases]string{"released", "lost", "closed"}

func (r ReleaseReason) String() string { return releaseNames[r] }

// LossReason is why a holding was lost (curator.loss.reason).
type LossReason uint8

// The loss reasons.
const (
	LossSuspended   LossReason = iota // the connection was suspended (curator.LoseOnSuspend)
	LossSessionLost                   // the session expired or was declared lost
	LossNodeDeleted                   // the node was found gone (deleted by someone, or with a session the client had not yet seen expire)
	LossClosed                        // the client was closed while holding
	numLosses
)

var lossNames = [numLosses]string{"suspended", "session_lost", "node_deleted", "closed"}

func (r LossReason) String() string { return lossNames[r] }

// lockBuckets: waits and holds run from milliseconds to minutes.
var lockBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300}

type recipeInstruments struct {
	acquire, hold metric.Float64Histogram
	held, waiting metric.Int64UpDownCounter
	losses        metric.Int64Counter
	tracer        trace.Tracer
}

func (p *Provider) instruments(s scopeID) *recipeInstruments {
	sc := &p.scopes[s]
	sc.once.Do(func() {
		m := p.meter(scopeNames[s])
		ins := &recipeInstruments{
			acquire: histogram(m, MetricAcquireDuration, "s",
				"Time from the start of an acquisition (lock, lease, leadership) to its outcome.", lockBuckets),
			hold: histogram(m, MetricHoldDuration, "s",
				"Time a holding (lock, lease, leadership) lasted, from acquired to released or lost.", lockBuckets),
			held:    upDown(m, MetricHeld, "{holding}", "Holdings (locks, leases, leaderships) held now and not lost."),
			waiting: upDown(m, MetricWaiting, "{waiter}", "Acquisitions under way (waiting for a lock, a lease or leadership)."),
			losses:  counter(m, MetricLosses, "{loss}", "Holdings lost, by reason."),
		}
		ins.tracer = p.tracer(scopeNames[s])
		sc.ins = ins
	})
	return sc.ins
}

// recipeSets are the attribute sets of one recipe kind (and path, with
// path attributes), built once.
type recipeSets struct {
	attrs   []attribute.KeyValue // curator.recipe [, curator.path]
	base    *attrs
	outcome [numOutcomes]*attrs // OutcomeError's without error.type
	release [numReleases]*attrs
	loss    [numLosses]*attrs
	errs    sync.Map // error.type -> *attrs of OutcomeError
}

func newSets(kind Kind, path string, withPath bool) *recipeSets {
	s := &recipeSets{attrs: []attribute.KeyValue{KeyRecipe.String(kind.String())}}
	if withPath {
		s.attrs = append(s.attrs, KeyPath.String(path))
	}
	with := func(kv attribute.KeyValue) *attrs {
		return newAttrs(append(append([]attribute.KeyValue(nil), s.attrs...), kv)...)
	}
	s.base = newAttrs(s.attrs...)
	for o := range numOutcomes {
		s.outcome[o] = with(KeyOutcome.String(o.String()))
	}
	for r := range numReleases {
		s.release[r] = with(KeyReleaseReason.String(r.String()))
	}
	for r := range numLosses {
		s.loss[r] = with(KeyLossReason.String(r.String()))
	}
	return s
}

func (s *recipeSets) errorSet(errType string) *attrs {
	if v, ok := s.errs.Load(errType); ok {
		return v.(*attrs)
	}
	set := newAttrs(append(append([]attribute.KeyValue(nil), s.attrs...),
		KeyOutcome.String(OutcomeError.String()), KeyErrorType.String(errType))...)
	v, _ := s.errs.LoadOrStore(errType, set)
	return v.(*attrs)
}

type pathKey struct {
	kind Kind
	path string
}

// Recipe is the telemetry of one recipe instance: its client's provider,
// its kind and its path. The zero Recipe records nothing.
type Recipe struct {
	p    *Provider
	kind Kind
	path string // "" without path attributes
}

// Recipe returns the telemetry of a recipe of kind on path (the path is
// recorded only if the client asked for path attributes). It is a small
// value: build it at construction, or per call.
func (p *Provider) Recipe(kind Kind, path string) Recipe {
	if p == nil {
		return Recipe{}
	}
	if !p.paths {
		path = ""
	}
	return Recipe{p: p, kind: kind, path: path}
}

// Provider returns the telemetry the recipe records with.
func (r Recipe) Provider() *Provider { return r.p }

func (r Recipe) ins() *recipeInstruments { return r.p.instruments(kinds[r.kind].scope) }

func (r Recipe) sets() *recipeSets {
	p := r.p
	if !p.paths {
		k := &p.kinds[r.kind]
		k.once.Do(func() { k.sets = newSets(r.kind, "", false) })
		return k.sets
	}
	key := pathKey{r.kind, r.path}
	if v, ok := p.pathSets.Load(key); ok {
		return v.(*recipeSets)
	}
	v, _ := p.pathSets.LoadOrStore(key, newSets(r.kind, r.path, true))
	return v.(*recipeSets)
}

// Acquisition is one acquisition being recorded; nil when nothing records
// (its methods are then no-ops).
type Acquisition struct {
	r       Recipe
	ctx     context.Context
	start   time.Time
	waiting bool // counted in curator.lock.waiting
	span    trace.Span
}

// acquireCtx is the context an acquisition runs under when it is traced:
// its span is the current span (so that the ZooKeeper spans of the
// acquisition are its children), and Outer gives back the caller's
// context, for what outlives the acquisition (the held context).
type acquireCtx struct {
	context.Context
	outer context.Context
}

// Outer returns the context the outermost StartAcquire was given, if ctx
// is one it returned; else ctx. A holding's context must derive from it, not from
// the acquisition's span.
func Outer(ctx context.Context) context.Context {
	for {
		a, ok := ctx.(*acquireCtx)
		if !ok {
			return ctx
		}
		ctx = a.outer // a MultiLock's member runs in the MultiLock's acquisition
	}
}

// StartAcquire starts recording an acquisition: the waiting count, the
// clock and, when tracing, an INTERNAL span whose context it returns
// (pass it to the acquisition's calls, and Outer(ctx) to what outlives
// them). With nothing recording it returns ctx and nil at once.
func (r Recipe) StartAcquire(ctx context.Context) (context.Context, *Acquisition) {
	if r.p == nil || ctx == nil {
		return ctx, nil
	}
	ins := r.ins()
	waiting, traced := ins.waiting.Enabled(ctx), r.p.tracing()
	if !waiting && !traced && !ins.acquire.Enabled(ctx) {
		return ctx, nil
	}
	a := &Acquisition{r: r, ctx: ctx, start: time.Now()}
	s := r.sets()
	if waiting {
		ins.waiting.Add(ctx, 1, s.base.add...)
		a.waiting = true
	}
	if traced {
		sctx, span := ins.tracer.Start(ctx, kinds[r.kind].acquire, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(s.attrs...), trace.WithTimestamp(a.start))
		a.ctx, a.span = sctx, span
		return &acquireCtx{Context: sctx, outer: ctx}, a
	}
	return ctx, a
}

// OnEnqueue wraps fn (which may be nil) so that, when the acquisition is
// traced, the node made is a span event (its sequence number; its path
// only with path attributes) before fn is called.
func (a *Acquisition) OnEnqueue(fn func(node string)) func(node string) {
	if a == nil || a.span == nil || !a.span.IsRecording() {
		return fn
	}
	return func(node string) {
		a.Enqueued(node)
		if fn != nil {
			fn(node)
		}
	}
}

// Enqueued adds the span event of a node made for the acquisition.
func (a *Acquisition) Enqueued(node string) {
	if a == nil || a.span == nil || !a.span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{KeySequence.String(sequence(node))}
	if a.r.p.paths {
		attrs = append(attrs, KeyZnodePath.String(node))
	}
	a.span.AddEvent("enqueued", trace.WithAttributes(attrs...))
}

// sequence is the trailing digits of a node name.
func sequence(node string) string {
	i := len(node)
	for i > 0 && node[i-1] >= '0' && node[i-1] <= '9' {
		i--
	}
	return node[i:]
}

// End records the acquisition's outcome, err being what it returned (nil:
// acquired).
func (a *Acquisition) End(err error) {
	if a == nil {
		return
	}
	end := time.Now()
	ins, s := a.r.ins(), a.r.sets()
	outcome, errType := OutcomeOf(err)
	if a.waiting {
		ins.waiting.Add(a.ctx, -1, s.base.add...)
	}
	if ins.acquire.Enabled(a.ctx) {
		set := s.outcome[outcome]
		if outcome == OutcomeError {
			set = s.errorSet(errType)
		}
		ins.acquire.Record(a.ctx, end.Sub(a.start).Seconds(), set.rec...)
	}
	if a.span != nil {
		a.span.SetAttributes(KeyOutcome.String(outcome.String()))
		if outcome == OutcomeError {
			a.span.SetAttributes(KeyErrorType.String(errType))
			a.span.SetStatus(codes.Error, errType)
		}
		a.span.End(trace.WithTimestamp(end))
	}
}

// Holding is one holding being recorded (held count, hold time, loss);
// nil when nothing records.
type Holding struct {
	r       Recipe
	start   time.Time
	counted bool // counted in curator.lock.held
	ended   atomic.Bool
}

// Holding starts recording a holding that begins now; nil when none of its
// instruments records.
func (r Recipe) Holding() *Holding {
	if r.p == nil {
		return nil
	}
	ctx := context.Background()
	ins := r.ins()
	held := ins.held.Enabled(ctx)
	if !held && !ins.hold.Enabled(ctx) && !ins.losses.Enabled(ctx) {
		return nil
	}
	h := &Holding{r: r, start: time.Now()}
	if held {
		ins.held.Add(ctx, 1, r.sets().base.add...)
		h.counted = true
	}
	return h
}

// Lost records the loss of the holding, which ends it (the signature of
// driver.Hold.OnLoss's callback).
func (h *Holding) Lost(reason LossReason) {
	if h == nil {
		return
	}
	ctx := context.Background()
	ins := h.r.ins()
	if ins.losses.Enabled(ctx) {
		ins.losses.Add(ctx, 1, h.r.sets().loss[reason].add...)
	}
	h.end(ctx, ReleaseLost)
}

// Released records the end of the holding by the recipe; a holding lost
// before keeps its loss.
func (h *Holding) Released(reason ReleaseReason) {
	if h == nil {
		return
	}
	h.end(context.Background(), reason)
}

func (h *Holding) end(ctx context.Context, reason ReleaseReason) {
	if !h.ended.CompareAndSwap(false, true) {
		return
	}
	ins, s := h.r.ins(), h.r.sets()
	if h.counted {
		ins.held.Add(ctx, -1, s.base.add...)
	}
	if ins.hold.Enabled(ctx) {
		ins.hold.Record(ctx, time.Since(h.start).Seconds(), s.release[reason].rec...)
	}
}

// Release is one release being traced; nil when not traced.
type Release struct{ span trace.Span }

// StartRelease starts the INTERNAL span of a release, when tracing, and
// returns its context.
func (r Recipe) StartRelease(ctx context.Context) (context.Context, *Release) {
	if r.p == nil || ctx == nil || !r.p.tracing() {
		return ctx, nil
	}
	ctx, span := r.ins().tracer.Start(ctx, kinds[r.kind].release, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(r.sets().attrs...))
	return ctx, &Release{span}
}

// End ends the release's span; err is what the release returned.
func (rl *Release) End(err error) {
	if rl == nil {
		return
	}
	if err != nil {
		t := ErrorType(err)
		rl.span.SetAttributes(KeyErrorType.String(t))
		rl.span.SetStatus(codes.Error, t)
	}
	rl.span.End()
}

// JoinPaths is the curator.path of a recipe over several paths (a
// MultiLock): the paths joined with ",", or "" without path attributes.
func (p *Provider) JoinPaths(paths []string) string {
	if !p.Paths() {
		return ""
	}
	return strings.Join(paths, ",")
}
