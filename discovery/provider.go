package discovery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/recipe"
)

// Strategy picks one of a service's usable instances (Curator's
// ProviderStrategy): Pick returns an index into ids (sorted, never empty).
// It is called from any goroutine.
type Strategy interface {
	Pick(ids []string) int
}

// RoundRobin returns Curator's RoundRobinStrategy: each instance in turn.
// Its counter is unsigned (Curator's Math.abs fails after 2^31 calls).
func RoundRobin() Strategy { return &roundRobin{} }

type roundRobin struct{ n atomic.Uint64 }

func (r *roundRobin) Pick(ids []string) int { return int((r.n.Add(1) - 1) % uint64(len(ids))) }

// Random returns Curator's RandomStrategy: an instance at random.
func Random() Strategy { return random{} }

type random struct{}

func (random) Pick(ids []string) int { return rand.IntN(len(ids)) }

// Sticky returns Curator's StickyStrategy: the instance picked last while
// it is still usable (by id; Curator compares every field, so an updated
// instance counts as a new one), else master's pick.
func Sticky(master Strategy) Strategy { return &sticky{master: master} }

type sticky struct {
	master Strategy
	mu     sync.Mutex
	id     string
}

func (s *sticky) Pick(ids []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id != "" {
		for i, id := range ids {
			if id == s.id {
				return i
			}
		}
	}
	i := s.master.Pick(ids)
	s.id = ids[i]
	return i
}

// Provider is Curator's ServiceProvider: one instance of a service at a
// time, per a Strategy, from a Cache of its own, skipping instances that
// are disabled, filtered out or down (reported failing by NoteError).
type Provider[T any] struct {
	cache    *Cache[T]
	strategy Strategy
	filters  []func(Instance[T]) bool
	down     *downPolicy
}

// ProviderOption configures a Provider.
type ProviderOption func(*providerOptions)

type providerOptions struct {
	recipe.Options
	strategy  Strategy
	filters   []any
	timeout   time.Duration
	threshold int
}

// WithStrategy sets the provider's strategy (default RoundRobin).
func WithStrategy(s Strategy) ProviderOption {
	return func(o *providerOptions) {
		if s == nil {
			o.Fail("nil strategy")
		}
		o.strategy = s
	}
}

// WithInstanceFilter adds a filter (Curator's additionalFilter): only
// instances for which keep returns true are provided. Its T must be the
// provider's.
func WithInstanceFilter[T any](keep func(Instance[T]) bool) ProviderOption {
	return func(o *providerOptions) {
		if keep == nil {
			o.Fail("nil filter")
		}
		o.filters = append(o.filters, keep)
	}
}

// WithDownPolicy sets when an instance counts as down (Curator's
// DownInstancePolicy): after threshold NoteErrors, until timeout after the
// first of them (default 30 s and 2, Curator's).
func WithDownPolicy(timeout time.Duration, threshold int) ProviderOption {
	return func(o *providerOptions) {
		if timeout <= 0 || threshold < 1 {
			o.Fail("down policy %v, %d", timeout, threshold)
		}
		o.timeout, o.threshold = timeout, threshold
	}
}

// NewProvider returns a Provider of the service name, not started.
func (d *Discovery[T]) NewProvider(name string, opts ...ProviderOption) (*Provider[T], error) {
	o := providerOptions{strategy: RoundRobin(), timeout: 30 * time.Second, threshold: 2}
	if err := recipe.Apply(&o, opts); err != nil {
		return nil, err
	}
	p := &Provider[T]{strategy: o.strategy, down: &downPolicy{timeout: o.timeout, threshold: o.threshold, errs: map[string]*downEntry{}}}
	for _, f := range o.filters {
		keep, ok := f.(func(Instance[T]) bool)
		if !ok {
			return nil, fmt.Errorf("discovery: provider of %s: filter %T for another payload type: %w",
				name, f, curator.ErrInvalidArgument)
		}
		p.filters = append(p.filters, keep)
	}
	c, err := d.NewCache(name)
	if err != nil {
		return nil, err
	}
	p.cache = c
	return p, nil
}

// Start starts the provider's cache and waits for its first load, or ctx
// ends.
func (p *Provider[T]) Start(ctx context.Context) error { return p.cache.Start(ctx) }

// Instance returns an instance per the strategy, false when none is usable
// (Curator returns null). With no filter, no instance down and none
// disabled, it picks from the cache's shared snapshot without a copy.
func (p *Provider[T]) Instance() (Instance[T], bool) {
	sn := p.cache.snapshot()
	if len(p.filters) == 0 && sn.enabled && !p.down.any() {
		if len(sn.all) == 0 {
			return Instance[T]{}, false
		}
		return sn.all[p.strategy.Pick(sn.ids)], true
	}
	all := p.usable(sn)
	if len(all) == 0 {
		return Instance[T]{}, false
	}
	ids := make([]string, len(all))
	for i, in := range all {
		ids[i] = in.ID
	}
	return all[p.strategy.Pick(ids)], true
}

// All returns every usable instance (Curator's getAllInstances), sorted by
// id: enabled, not down, and kept by every filter.
func (p *Provider[T]) All() []Instance[T] { return p.usable(p.cache.snapshot()) }

func (p *Provider[T]) usable(sn *snapshot[T]) []Instance[T] {
	now := time.Now()
	var out []Instance[T]
next:
	for _, in := range sn.all {
		if in.Disabled || p.down.isDown(in.ID, now) {
			continue
		}
		for _, keep := range p.filters {
			if !keep(in) {
				continue next
			}
		}
		out = append(out, in)
	}
	return out
}

// NoteError reports that a call to inst failed (Curator's noteError): once
// the policy's threshold is reached, inst is skipped until the policy's
// timeout after its first error.
func (p *Provider[T]) NoteError(inst Instance[T]) { p.down.note(inst.ID, time.Now()) }

// Cache returns the provider's cache (its events, for instance).
func (p *Provider[T]) Cache() *Cache[T] { return p.cache }

// Close closes the provider's cache.
func (p *Provider[T]) Close() error { return p.cache.Close() }

// downPolicy counts errors per instance id. Curator keys them by every
// field of the instance; an id is what names an instance here, so an
// update (a new payload) does not forgive it.
type downPolicy struct {
	timeout   time.Duration
	threshold int
	mu        sync.Mutex
	errs      map[string]*downEntry
}

type downEntry struct {
	first time.Time
	count int
}

func (d *downPolicy) note(id string, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.purge(now)
	e := d.errs[id]
	if e == nil {
		e = &downEntry{first: now}
		d.errs[id] = e
	}
	e.count++
}

// any reports whether an error was noted within the policy's timeout
// (then instances must be checked one by one).
func (d *downPolicy) any() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.purge(time.Now())
	return len(d.errs) > 0
}

func (d *downPolicy) isDown(id string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.purge(now)
	e := d.errs[id]
	return e != nil && e.count >= d.threshold
}

// purge forgets the entries whose window has passed: "down" lasts timeout
// from the first error (Curator's window does not slide either; it purges
// at most every timeout/2, so its "down" lasts up to 1.5x timeout).
func (d *downPolicy) purge(now time.Time) {
	for id, e := range d.errs {
		if now.Sub(e.first) >= d.timeout {
			delete(d.errs, id)
		}
	}
}
