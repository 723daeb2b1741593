// Package grpc is a grpc-go resolver on gocurator's service discovery: a
// gRPC client dials "zk:///<service name>" and balances over the instances
// registered under that name, by Go or by Java services (Curator's
// curator-x-discovery), as they come and go.
//
// It is a Go module of its own, so that the core module never depends on
// grpc-go.
package grpc

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/attributes"
	"google.golang.org/grpc/resolver"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/discovery"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/cache"
)

// IDKey is the attribute key under which each endpoint carries its
// instance's id (a string).
const IDKey = "gocurator.discovery.id"

// Option configures a Builder.
type Option func(*options)

type options struct {
	scheme string
	ssl    bool
	err    error
}

// WithScheme sets the target scheme the builder serves (default "zk"; it
// must be lower case).
func WithScheme(s string) Option {
	return func(o *options) {
		if s == "" || s != strings.ToLower(s) {
			o.err = fmt.Errorf("discovery/grpc: scheme %q: want a lower-case name: %w", s, curator.ErrInvalidArgument)
		}
		o.scheme = s
	}
}

// WithSSLPort dials each instance's SSL port (instances without one are
// left out) instead of its port (default: the port, else the SSL port).
func WithSSLPort() Option { return func(o *options) { o.ssl = true } }

// Builder is a resolver.Builder for targets "<scheme>:///<service name>":
// give it to grpc.NewClient with grpc.WithResolvers, or register it with
// resolver.Register.
type Builder[T any] struct {
	d *discovery.Discovery[T]
	o options
}

// NewBuilder returns a Builder resolving the services under basePath
// through client. T is the instances' payload type (any, if unused).
func NewBuilder[T any](client *framework.Client, basePath string, opts ...Option) (*Builder[T], error) {
	o := options{scheme: "zk"}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("discovery/grpc: nil option: %w", curator.ErrInvalidArgument)
		}
		opt(&o)
	}
	if o.err != nil {
		return nil, o.err
	}
	d, err := discovery.New[T](client, basePath)
	if err != nil {
		return nil, err
	}
	return &Builder[T]{d: d, o: o}, nil
}

// Scheme returns the scheme the builder serves.
func (b *Builder[T]) Scheme() string { return b.o.scheme }

// Build starts resolving target's service (called by gRPC, inside
// NewClient). It returns at once: the first state is sent once the
// service's cache has loaded, never before (an empty state would fail the
// first calls).
func (b *Builder[T]) Build(target resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	name := strings.TrimPrefix(target.Endpoint(), "/")
	c, err := b.d.NewCache(name)
	if err != nil {
		return nil, fmt.Errorf("discovery/grpc: target %q: %w", target.URL.String(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &zkResolver[T]{name: name, cc: cc, c: c, ssl: b.o.ssl, cancel: cancel, started: make(chan struct{})}
	r.remove = c.AddListener(r.event)
	go func() {
		defer close(r.started)
		// Start ends when the first load is delivered (EventInitialized
		// sends the first state) or ctx ends (Close).
		if err := c.Start(ctx); err != nil && ctx.Err() == nil {
			cc.ReportError(err)
		}
	}()
	return r, nil
}

type zkResolver[T any] struct {
	name    string
	cc      resolver.ClientConn
	c       *discovery.Cache[T]
	ssl     bool
	cancel  context.CancelFunc
	started chan struct{}
	remove  func()

	mu     sync.Mutex
	inited bool
	last   string // the addresses last sent, to skip a state unchanged
	closed bool
}

// event sends the cache's instances to gRPC after each change, once the
// first load is done. A rebuild after a session loss reports only real
// differences, so the state is never emptied for a rebuild; while the
// connection is suspended the last state stays.
func (r *zkResolver[T]) event(e discovery.Event[T]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if e.Type == cache.EventInitialized {
		r.inited = true
	}
	if !r.inited {
		return
	}
	var eps []resolver.Endpoint
	var key strings.Builder
	for _, in := range r.c.Instances() {
		if in.Disabled {
			continue
		}
		port := in.Port
		if r.ssl || port == 0 {
			port = in.SSLPort
		}
		if r.ssl && in.SSLPort == 0 || port == 0 || in.Address == "" {
			continue
		}
		addr := net.JoinHostPort(in.Address, strconv.Itoa(port))
		key.WriteString(in.ID + "=" + addr + ";")
		eps = append(eps, resolver.Endpoint{Addresses: []resolver.Address{{Addr: addr}},
			Attributes: attributes.New(IDKey, in.ID)})
	}
	if key.String() == r.last && e.Type != cache.EventInitialized {
		return
	}
	r.last = key.String()
	// An error back (no address: round_robin and pick_first refuse an
	// empty list) needs no retry: the next change sends a new state.
	_ = r.cc.UpdateState(resolver.State{Endpoints: eps})
}

// ResolveNow does nothing: the cache's watches keep the state current.
func (r *zkResolver[T]) ResolveNow(resolver.ResolveNowOptions) {}

// Close stops the resolver: its cache and every goroutine of it.
func (r *zkResolver[T]) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	<-r.started
	r.remove()
	_ = r.c.Close()
}
