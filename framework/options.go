package framework

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/retry"
)

// Defaults, as Curator's CuratorFrameworkFactory has them.
const (
	DefaultSessionTimeout    = 60 * time.Second
	DefaultConnectionTimeout = 15 * time.Second
)

// ACLProvider chooses the ACL of every node the client creates (Curator's
// ACLProvider). ForPath receives the node's path as the server sees it below
// the chroot, namespace included.
type ACLProvider interface {
	ForPath(path string) []zk.ACL
}

// ACLFunc adapts a function to an ACLProvider.
type ACLFunc func(path string) []zk.ACL

// ForPath calls f.
func (f ACLFunc) ForPath(path string) []zk.ACL { return f(path) }

// OpenACL is the default ACL provider: world:anyone with every permission
// (Curator's default, ZooDefs.Ids.OPEN_ACL_UNSAFE).
var OpenACL ACLProvider = ACLFunc(func(string) []zk.ACL { return zk.WorldACL(zk.PermAll) })

// Dialer opens the TCP (or TLS) connection to one ZooKeeper server; with it,
// a client can reach ZooKeeper's secure port through crypto/tls. The client
// calls it once per connection attempt with that server's "host:port", so a
// TLS dialer should leave tls.Config.ServerName empty: tls.DialWithDialer
// then verifies each server's certificate against the host it dialed. A
// fixed ServerName would verify every server of a multi-host connect string
// against one name (see ExampleWithDialer).
type Dialer func(network, address string, timeout time.Duration) (net.Conn, error)

type auth struct {
	scheme string
	auth   []byte
}

type options struct {
	sessionTimeout    time.Duration
	connectionTimeout time.Duration
	retryPolicy       retry.Policy
	namespace         string
	auths             []auth
	acl               ACLProvider
	defaultData       []byte
	dialer            Dialer
	logger            *slog.Logger
	expirePercent     int
	juteMaxBuffer     int
	listeners         []func(State)
	telemetry         telemetryOptions // telemetry.go
	err               error
}

// Option configures a Client (see New).
type Option func(*options)

func (o *options) fail(format string, args ...any) { failArg(&o.err, format, args...) }

// failArg sets *err, unless an error is there already, to an option's
// refusal: curator.ErrInvalidArgument with format's text.
func failArg(err *error, format string, args ...any) {
	if *err == nil {
		*err = fmt.Errorf("%w: "+format, append([]any{curator.ErrInvalidArgument}, args...)...)
	}
}

// maxSessionTimeout is the longest session timeout ZooKeeper's protocol
// carries (int32 milliseconds).
const maxSessionTimeout = math.MaxInt32 * time.Millisecond

// WithSessionTimeout sets the session timeout asked of the server (default
// 60 s, Curator's; the server bounds it by its min/max session timeout).
// It must be at least 1 ms and at most math.MaxInt32 ms (about 24.8 days),
// what ZooKeeper's int32 milliseconds carry.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) {
		if d < time.Millisecond || d > maxSessionTimeout {
			o.fail("session timeout %v not in [1ms, %v]", d, maxSessionTimeout)
		}
		o.sessionTimeout = d
	}
}

// WithConnectionTimeout sets how long an operation waits for a connection
// before it is tried anyway (default 15 s, Curator's). It also bounds the
// handshake with each server (at least minHandshake, 1 s): one that
// accepts the TCP connection but does not answer within it (a server
// still starting) is left for the next host of the connect string.
func WithConnectionTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.fail("connection timeout %v must be positive", d)
		}
		o.connectionTimeout = d
	}
}

// minHandshake is the least time a server's handshake is given, whatever
// the connection timeout: a handshake cut shorter than a loaded server
// answers in would only be tried again, and again.
const minHandshake = time.Second

// handshakeTimeout bounds each server's handshake (link.go): the
// connection timeout, at least minHandshake. go-zookeeper's own bound,
// 10x its read timeout, still applies when it is shorter.
func (o *options) handshakeTimeout() time.Duration { return max(o.connectionTimeout, minHandshake) }

// WithRetryPolicy sets the policy of the retry loop every operation runs in
// (default: exponential backoff, 100 ms base, 3 retries).
func WithRetryPolicy(p retry.Policy) Option {
	return func(o *options) {
		if v := reflect.ValueOf(p); p == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
			o.fail("nil retry policy") // a typed nil too: it would panic at the first retry
		}
		o.retryPolicy = p
	}
}

// WithNamespace prefixes every path with "/"+ns (Curator's namespace); the
// prefix is stripped from every path the client returns.
func WithNamespace(ns string) Option {
	return func(o *options) {
		if ns != "" {
			if err := validatePath("/"+ns, false); err != nil {
				o.fail("namespace %q: %v", ns, err)
			}
		}
		o.namespace = ns
	}
}

// WithAuth adds authentication (e.g. "digest", "user:password"), applied to
// every connection and session the client makes.
func WithAuth(scheme string, credentials []byte) Option {
	return func(o *options) {
		if scheme == "" {
			o.fail("empty auth scheme")
		}
		o.auths = append(o.auths, auth{scheme, append([]byte(nil), credentials...)})
	}
}

// WithACLProvider sets the ACL provider for created nodes (default OpenACL).
func WithACLProvider(p ACLProvider) Option {
	return func(o *options) {
		if p == nil {
			o.fail("nil ACL provider")
		}
		o.acl = p
	}
}

// WithDefaultData sets the data recipes store in the nodes they create when
// the caller gives none (default: this host's IP address, as Curator does).
func WithDefaultData(data []byte) Option {
	return func(o *options) { o.defaultData = append([]byte(nil), data...) }
}

// WithDialer sets how connections to servers are opened (e.g. with TLS).
func WithDialer(d Dialer) Option {
	return func(o *options) {
		if d == nil {
			o.fail("nil dialer")
		}
		o.dialer = d
	}
}

// WithListener registers fn as a connection-state listener before the
// client starts connecting, so that it hears every state from the first
// CONNECTED (a listener added with AddListener after New may miss states
// posted meanwhile). It may be given several times; see AddListener for
// how listeners run. Default: none.
func WithListener(fn func(State)) Option {
	return func(o *options) {
		if fn == nil {
			o.fail("nil listener")
		}
		o.listeners = append(o.listeners, fn)
	}
}

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l == nil {
			o.fail("nil logger")
		}
		o.logger = l
	}
}

// WithSessionExpirationPercent sets after which share of the session timeout
// the client, disconnected, declares the session LOST itself (Curator's
// simulatedSessionExpirationPercent, default 100). It must be in (0, 100].
// The share is counted from the sending of the last request the server
// answered (a ping when idle: go-zookeeper pings every third of the
// timeout), not, as in Curator, from the noticing of the disconnect, which
// comes up to two thirds of the timeout after the last reply. The server
// counts its timeout from the last request it received, which it received
// no earlier, so at 100 the session is declared lost no later than the
// server can expire it; a smaller share leaves the rest of the timeout as
// a margin (for a holder slow to act on the news).
func WithSessionExpirationPercent(p int) Option {
	return func(o *options) {
		if p <= 0 || p > 100 {
			o.fail("session expiration percent %d not in (0, 100]", p)
		}
		o.expirePercent = p
	}
}

// DefaultJuteMaxBuffer is ZooKeeper's default jute.maxbuffer (0xfffff
// bytes), the longest request packet a server reads.
const DefaultJuteMaxBuffer = 1<<20 - 1

// zkSendBuffer is go-zookeeper's default send buffer (its bufferSize).
const zkSendBuffer = 1536 * 1024

// WithJuteMaxBuffer sets the servers' jute.maxbuffer (the Java system
// property; default DefaultJuteMaxBuffer, ZooKeeper's). A request whose
// packet (header, path, data, ACL...) is longer is refused before it is
// sent, with an error wrapping curator.ErrInvalidArgument: the server would drop
// the connection, which would be retried as a connection loss and cost
// every lock held on it. Set it when the servers run with a larger
// jute.maxbuffer (and every server with the same value); a smaller one is
// also accepted, to keep requests small.
func WithJuteMaxBuffer(n int) Option {
	return func(o *options) {
		if n <= 0 || n > math.MaxInt32-4 {
			o.fail("jute.maxbuffer %d not in (0, %d]", n, math.MaxInt32-4)
		}
		o.juteMaxBuffer = n
	}
}

// sendBuffer is the go-zookeeper option that sizes its send buffer for the
// largest request the client lets through (the length, then the packet).
func (o *options) sendBuffer() func(*zk.Conn) {
	return zk.WithMaxConnBufferSize(max(zkSendBuffer, o.juteMaxBuffer+4))
}

// DefaultRetryPolicy returns the retry policy a client uses unless
// WithRetryPolicy sets another (Curator's usual ExponentialBackoffRetry:
// 100 ms base sleep, 3 retries); a fresh value, for wrapping.
func DefaultRetryPolicy() retry.Policy {
	policy, _ := retry.NewExponentialBackoff(100*time.Millisecond, 3)
	return policy
}

func defaultOptions() options {
	policy := DefaultRetryPolicy()
	return options{
		sessionTimeout:    DefaultSessionTimeout,
		connectionTimeout: DefaultConnectionTimeout,
		retryPolicy:       policy,
		acl:               OpenACL,
		defaultData:       append([]byte(nil), localAddress()...),
		dialer:            net.DialTimeout,
		logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		expirePercent:     100,
		juteMaxBuffer:     DefaultJuteMaxBuffer,
	}
}

// localAddress is Curator's default node data
// (CuratorFrameworkFactory.getLocalAddress):
// InetAddress.getLocalHost().getHostAddress(), the address the host NAME
// resolves to (IPv4 first, as Java prefers it; often 127.0.0.1 or
// 127.0.1.1 on Debian), so that tools reading Curator's nodes read ours the
// same. Empty when the name does not resolve, as in Curator. Looked up
// once per process, as Java caches it.
var localAddress = sync.OnceValue(func() []byte {
	host, err := os.Hostname()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return nil
	}
	for _, ip := range ips {
		if ip4 := ip.To4(); ip4 != nil {
			return []byte(ip4.String())
		}
	}
	return []byte(ips[0].String())
})
