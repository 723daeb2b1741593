package framework

import (
	"context"
	"strings"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/gocurator/curator/internal/telemetry"
)

// telemetryOptions are the client's OpenTelemetry options, and what New
// builds from them.
type telemetryOptions struct {
	meterProvider  metric.MeterProvider // nil: the global one
	tracerProvider trace.TracerProvider // nil: the global one
	paths          bool
	p              *telemetry.Provider // built by New
}

// WithMeterProvider sets the OpenTelemetry MeterProvider the client and the
// recipes built on it record their metrics with (default: the global one,
// otel.GetMeterProvider(), which records nothing until the application
// installs an SDK). See "Metrics and traces" in the package documentation.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) {
		if mp == nil {
			o.fail("nil meter provider")
		}
		o.telemetry.meterProvider = mp
	}
}

// WithTracerProvider sets the OpenTelemetry TracerProvider the client and
// the recipes built on it start their spans with (default: the global one,
// otel.GetTracerProvider(); no span is started until the application has
// set one there or here). See "Metrics and traces" in the package
// documentation.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) {
		if tp == nil {
			o.fail("nil tracer provider")
		}
		o.telemetry.tracerProvider = tp
	}
}

// WithPathAttributes puts paths on the client's telemetry: the recipe's
// path (curator.path) on the recipes' metrics and spans, and the znode
// (zookeeper.path) on the ZooKeeper spans. Off by default, because every
// distinct path is a time series of every recipe metric (a histogram is
// a dozen series each): a cardinality risk with many or generated lock
// paths, and paths may say more than a dashboard should. Znode paths are
// never put on metrics (sequence numbers make them unbounded).
func WithPathAttributes() Option {
	return func(o *options) { o.telemetry.paths = true }
}

func init() {
	telemetry.SetClientLookup(func(client any) *telemetry.Provider {
		if c, ok := client.(*Client); ok && c != nil {
			return c.opts.telemetry.p
		}
		return nil
	})
}

// initTelemetry builds the client's instruments (New).
func (c *Client) initTelemetry() {
	t := &c.opts.telemetry
	t.p = telemetry.New(telemetry.Config{
		MeterProvider:  t.meterProvider,
		TracerProvider: t.tracerProvider,
		Paths:          t.paths,
		Namespace:      c.paths.prefix,
	})
}

// startAttempt starts recording one attempt of the retry loop: nil, at the
// cost of two checks, when nothing records. (Not inlined: its frame stays
// off callPending's, which every waiting goroutine carries.)
//
//go:noinline
func (c *Client) startAttempt(ctx context.Context, conn *zk.Conn, op, path string) *telemetry.Op {
	return c.opts.telemetry.p.StartOp(ctx, op, conn, path)
}

// endAttempt records the attempt's outcome. A transaction refused before
// it was sent again (errNoRetry) made no attempt on the wire: its span
// (started by startAttempt) is ended, but no duration is recorded.
func (c *Client) endAttempt(a *telemetry.Op, err error) {
	if err == errNoRetry {
		a.Drop()
		return
	}
	a.End(err)
}

// noteServerExpiry counts the loss of the current session because the
// server said it expired (c.mu held; before loseSessionLocked).
func (c *Client) noteServerExpiry() { c.noteExpiry(telemetry.ExpiryServer) }

// noteSimulatedExpiry counts the loss of the current session the client
// declares itself (onExpireTimerLocked; c.mu held).
func (c *Client) noteSimulatedExpiry() { c.noteExpiry(telemetry.ExpirySimulated) }

func (c *Client) noteExpiry(source string) {
	if c.session != nil && !c.session.Lost() {
		c.opts.telemetry.p.SessionExpired(source)
	}
}

// noteState counts a connection state change (post, c.mu held).
func (c *Client) noteState(s State) {
	c.opts.telemetry.p.StateChanged(strings.ToLower(s.String()))
}

// report brings the pending-delete counter to the number of background
// operations pending (b.mu held): it adds what changed since the last
// report, so that it converges on the truth even when the meter provider
// starts recording late.
func (b *background) report() {
	p := b.c.opts.telemetry.p
	if d := b.pendingLocked() - b.reported; d != 0 && p.PendingEnabled() {
		p.AddPending(int64(d))
		b.reported += d
	}
}
