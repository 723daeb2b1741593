package telemetry

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
)

// The client's metric names (see framework's package documentation).
const (
	MetricOpDuration    = "db.client.operation.duration"
	MetricTransitions   = "zookeeper.client.session.transitions"
	MetricExpirations   = "zookeeper.client.session.expirations"
	MetricPendingDelete = "zookeeper.client.guaranteed_delete.pending"
)

// Attribute keys of the client's own (system-specific) attributes.
const (
	KeySessionState  = attribute.Key("zookeeper.session.state")
	KeyExpirySource  = attribute.Key("zookeeper.session.expiration.source")
	KeySessionID     = attribute.Key("zookeeper.session.id")
	KeyZnodePath     = attribute.Key("zookeeper.path")
	KeyDBSystemName  = semconv.DBSystemNameKey
	KeyDBOperation   = semconv.DBOperationNameKey
	KeyDBNamespace   = semconv.DBNamespaceKey
	KeyDBStatusCode  = semconv.DBResponseStatusCodeKey
	KeyErrorType     = semconv.ErrorTypeKey
	KeyServerAddress = semconv.ServerAddressKey
	KeyServerPort    = semconv.ServerPortKey
)

// Expiry sources.
const (
	ExpiryServer    = "server"    // the server said the session expired
	ExpirySimulated = "simulated" // the client declared it lost: disconnected, the session timeout past since its last answered request was sent
)

// opBuckets are the advisory boundaries of db.client.operation.duration
// (semantic conventions, database metrics).
var opBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

type zkInstruments struct {
	opDur       metric.Float64Histogram
	transitions metric.Int64Counter
	expirations metric.Int64Counter
	pending     metric.Int64UpDownCounter
	tracer      trace.Tracer

	mu    sync.RWMutex
	ops   map[opKey]*attrs
	zkSys attribute.KeyValue
}

func (z *zkInstruments) init(p *Provider) {
	m := p.meter(ScopeFramework)
	z.opDur = histogram(m, MetricOpDuration, "s",
		"Duration of ZooKeeper operations, one sample per attempt of the retry loop.", opBuckets)
	z.transitions = counter(m, MetricTransitions, "{transition}", "Connection state changes of the client, by new state.")
	z.expirations = counter(m, MetricExpirations, "{expiration}",
		"Sessions lost by expiry: told by the server, or declared by the client once disconnected past the session timeout since its last answered request was sent.")
	z.pending = upDown(m, MetricPendingDelete, "{operation}",
		"Guaranteed deletes (and protected-node clean-ups) not yet done, retried in the background.")
	z.tracer = p.tracer(ScopeFramework)
	z.ops = map[opKey]*attrs{}
	z.zkSys = KeyDBSystemName.String("zookeeper")
}

// Conn is what the telemetry of an attempt reads of its connection
// (*zk.Conn).
type Conn interface {
	Server() string
	SessionID() int64
}

// Op is one attempt of a ZooKeeper operation being recorded; nil when
// nothing records.
type Op struct {
	p      *Provider
	ctx    context.Context
	name   string
	server string
	start  time.Time
	timed  bool
	span   trace.Span
}

// StartOp starts recording one attempt of the operation op (the retry
// loop's name of it) on conn; path is the znode, put on the span only with
// path attributes. It returns nil, having done nothing, when neither the
// duration histogram nor a tracer records.
func (p *Provider) StartOp(ctx context.Context, op string, conn Conn, path string) *Op {
	if p == nil {
		return nil
	}
	ctx = ctxOr(ctx)
	timed, traced := p.zk.opDur.Enabled(ctx), p.tracing()
	if !timed && !traced {
		return nil
	}
	o := &Op{p: p, ctx: ctx, name: OpName(op), start: time.Now(), timed: timed}
	if conn != nil {
		o.server = conn.Server()
	}
	if traced {
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs, p.zk.zkSys, KeyDBOperation.String(o.name))
		attrs = appendServer(attrs, o.server)
		if p.namespace != "" {
			attrs = append(attrs, KeyDBNamespace.String(p.namespace))
		}
		if conn != nil {
			attrs = append(attrs, KeySessionID.String("0x"+strconv.FormatUint(uint64(conn.SessionID()), 16))) // negative for a server myid >= 128
		}
		if p.paths && path != "" {
			attrs = append(attrs, KeyZnodePath.String(path))
		}
		o.ctx, o.span = p.zk.tracer.Start(ctx, o.name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attrs...), trace.WithTimestamp(o.start))
	}
	return o
}

// End records the attempt's outcome: err is what the attempt returned (nil
// on success).
func (o *Op) End(err error) {
	if o == nil {
		return
	}
	end := time.Now()
	var errType, code string
	if err != nil {
		errType, code = ZKErrorType(err)
	}
	if o.timed {
		o.p.zk.opDur.Record(o.ctx, end.Sub(o.start).Seconds(), o.p.opSet(o.name, o.server, errType, code).rec...)
	}
	if o.span != nil {
		if err != nil {
			attrs := []attribute.KeyValue{KeyErrorType.String(errType)}
			if code != "" {
				attrs = append(attrs, KeyDBStatusCode.String(code))
			}
			o.span.SetAttributes(attrs...)
			o.span.SetStatus(codes.Error, errType)
		}
		o.span.End(trace.WithTimestamp(end))
	}
}

// Drop ends an attempt that made no request after all (the retry loop
// refused to send a transaction again): its span is ended, and no
// duration is recorded.
func (o *Op) Drop() {
	if o != nil && o.span != nil {
		o.span.End()
	}
}

type opKey struct{ op, server, errType, code string }

// opSet returns the attributes of an operation's sample, built once.
func (p *Provider) opSet(op, server, errType, code string) *attrs {
	k := opKey{op, server, errType, code}
	z := &p.zk
	z.mu.RLock()
	s, ok := z.ops[k]
	z.mu.RUnlock()
	if ok {
		return s
	}
	kvs := []attribute.KeyValue{z.zkSys, KeyDBOperation.String(op)}
	kvs = appendServer(kvs, server)
	if p.namespace != "" {
		kvs = append(kvs, KeyDBNamespace.String(p.namespace))
	}
	if errType != "" {
		kvs = append(kvs, KeyErrorType.String(errType))
	}
	if code != "" {
		kvs = append(kvs, KeyDBStatusCode.String(code))
	}
	s = newAttrs(kvs...)
	z.mu.Lock()
	z.ops[k] = s
	z.mu.Unlock()
	return s
}

// appendServer appends server.address and server.port of "host:port".
func appendServer(attrs []attribute.KeyValue, server string) []attribute.KeyValue {
	if server == "" {
		return attrs
	}
	host, port, err := net.SplitHostPort(server)
	if err != nil {
		return append(attrs, KeyServerAddress.String(server))
	}
	attrs = append(attrs, KeyServerAddress.String(host))
	if n, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, KeyServerPort.Int(n))
	}
	return attrs
}

// OpName maps the retry loop's operation names to ZooKeeper's request
// names (db.operation.name).
func OpName(op string) string {
	switch op {
	case "get":
		return "getData"
	case "set":
		return "setData"
	case "children", "find protected":
		return "getChildren"
	case "create namespace":
		return "create"
	}
	return op
}

// zkCodes are ZooKeeper's error names and codes (KeeperException.Code) for
// go-zookeeper's sentinels.
var zkCodes = []struct {
	err        error
	name, code string
}{
	{zk.ErrNoNode, "NONODE", "-101"},
	{zk.ErrNodeExists, "NODEEXISTS", "-110"},
	{zk.ErrBadVersion, "BADVERSION", "-103"},
	{zk.ErrNotEmpty, "NOTEMPTY", "-111"},
	{zk.ErrNoAuth, "NOAUTH", "-102"},
	{zk.ErrNoChildrenForEphemerals, "NOCHILDRENFOREPHEMERALS", "-108"},
	{zk.ErrSessionExpired, "SESSIONEXPIRED", "-112"},
	{zk.ErrInvalidACL, "INVALIDACL", "-114"},
	{zk.ErrAuthFailed, "AUTHFAILED", "-115"},
	{zk.ErrSessionMoved, "SESSIONMOVED", "-118"},
	{zk.ErrAPIError, "APIERROR", "-100"},
	{zk.ErrReconfigDisabled, "RECONFIGDISABLED", "-123"},
	{zk.ErrBadArguments, "BADARGUMENTS", "-8"},
}

// ZKErrorType returns error.type and db.response.status_code for what one
// attempt returned: ZooKeeper's error name and code when the server
// answered with one; CONNECTIONLOSS (no code: the client saw the
// connection go) for a lost or closed connection; timeout or canceled when
// the context ended the attempt; _OTHER else.
func ZKErrorType(err error) (errType, code string) {
	for _, c := range zkCodes {
		if errors.Is(err, c.err) {
			return c.name, c.code
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", ""
	case errors.Is(err, context.Canceled):
		return "canceled", ""
	}
	if errType, code = RawErrorType(err); errType != "" {
		return errType, code
	}
	return "_OTHER", ""
}

// RawErrorType decides, once for the framework's classify and for
// ZKErrorType, what a go-zookeeper error with no sentinel of ZooKeeper's
// error codes means: CONNECTIONLOSS for a closed, closing or never-made
// connection (no code) or a raw net error from a failed socket write (no
// code), or for the server's code -4, which go-zookeeper reports only as
// "unknown error: -4"; OPERATIONTIMEOUT for code -7 ("unknown error: -7");
// "" for anything else.
func RawErrorType(err error) (errType, code string) {
	switch {
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrClosing):
		return "CONNECTIONLOSS", ""
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown error: -4"):
		return "CONNECTIONLOSS", "-4"
	case strings.HasPrefix(msg, "unknown error: -7"):
		return "OPERATIONTIMEOUT", "-7"
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) { // a socket write failed
		return "CONNECTIONLOSS", ""
	}
	return "", ""
}

// StateChanged counts a connection state change; state is the new state's
// name in lower case (connected, suspended, reconnected, lost, read_only,
// auth_failed).
func (p *Provider) StateChanged(state string) {
	if p == nil {
		return
	}
	p.count(p.zk.transitions, "state\x00"+state, KeySessionState.String(state))
}

// SessionExpired counts a session lost by expiry; source is ExpiryServer or
// ExpirySimulated.
func (p *Provider) SessionExpired(source string) {
	if p == nil {
		return
	}
	p.count(p.zk.expirations, "expiry\x00"+source, KeyExpirySource.String(source))
}

// PendingEnabled reports whether the pending-delete counter records.
func (p *Provider) PendingEnabled() bool {
	return p != nil && p.zk.pending.Enabled(context.Background())
}

// AddPending adds d to the pending-delete counter.
func (p *Provider) AddPending(d int64) {
	if p == nil || d == 0 {
		return
	}
	p.zk.pending.Add(context.Background(), d)
}
