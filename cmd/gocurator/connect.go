package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/retry"
)

// connFlags are the flags of every command: where ZooKeeper is and how to
// reach it.
type connFlags struct {
	connect   string
	namespace string
	auth      string
	tlsCA     string
	tlsCert   string
	tlsKey    string
	timeout   time.Duration
	session   time.Duration // the session timeout, if a command sets it (else sessionTimeout)
	retries   *gatedRetry   // the client's retry policy, once dialled
}

// gatedRetry is the commands' retry policy: the framework's default
// (framework.DefaultRetryPolicy) except while a step runs whose retry
// would hide its outcome. A delete whose reply was lost, sent again, finds
// the node gone as if someone else had deleted it: release's delete is
// sent once, and its outcome checked after.
type gatedRetry struct {
	retry.Policy
	off atomic.Bool
}

func (g *gatedRetry) Next(retries int, elapsed time.Duration) (time.Duration, bool) {
	if g.off.Load() {
		return 0, false
	}
	return g.Policy.Next(retries, elapsed)
}

// once runs op with no retry.
func (g *gatedRetry) once(op func() error) error {
	g.off.Store(true)
	defer g.off.Store(false)
	return op()
}

// defaultConnect is $ZK_CONNECT, else a local server.
func defaultConnect() string {
	if s := os.Getenv("ZK_CONNECT"); s != "" {
		return s
	}
	return "127.0.0.1:2181"
}

func (f *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.connect, "connect", defaultConnect(), "ZooKeeper connect string `host:port[,host:port][/chroot]`; the default is $ZK_CONNECT when set")
	fs.StringVar(&f.namespace, "namespace", "", "Curator namespace `NS`: paths are under /NS (after any chroot)")
	fs.StringVar(&f.auth, "auth", "", "authentication `scheme:credentials`, e.g. digest:user:password")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "connect with TLS, trusting the CA certificates in this PEM `file` (default: the system's)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "connect with TLS, presenting this client certificate (PEM `file`; with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the client certificate's private key (PEM `file`; with --tls-cert)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "bound on connecting and on each step (a whole tree read is one step)")
}

// check refuses bad flag values before any connection.
func (f *connFlags) check() error {
	if f.timeout <= 0 {
		return fmt.Errorf("--timeout %v: must be positive", f.timeout)
	}
	if strings.TrimSpace(f.connect) == "" {
		return errors.New("--connect is empty")
	}
	if f.auth != "" {
		if scheme, cred, ok := strings.Cut(f.auth, ":"); !ok || scheme == "" || cred == "" {
			return fmt.Errorf("--auth %q: want scheme:credentials, e.g. digest:user:password", f.auth)
		}
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	return nil
}

func (f *connFlags) tls() bool { return f.tlsCA != "" || f.tlsCert != "" }

// sessionTimeout of the command's own session. It makes no ephemeral node,
// so this matters only to --watch riding out a disconnection.
const sessionTimeout = 30 * time.Second

// usageError is a bad flag value found while connecting (a TLS file that
// does not load): exit status 2.
type usageError struct{ error }

// dial connects, bounded by --timeout (and by ctx: Ctrl-C).
func (f *connFlags) dial(ctx context.Context) (*framework.Client, error) {
	f.retries = &gatedRetry{Policy: framework.DefaultRetryPolicy()}
	session := sessionTimeout
	if f.session > 0 {
		session = f.session
	}
	opts := []framework.Option{
		framework.WithSessionTimeout(session),
		framework.WithConnectionTimeout(f.timeout),
		framework.WithRetryPolicy(f.retries),
	}
	if f.namespace != "" {
		opts = append(opts, framework.WithNamespace(strings.Trim(f.namespace, "/")))
	}
	if f.auth != "" {
		scheme, cred, _ := strings.Cut(f.auth, ":")
		opts = append(opts, framework.WithAuth(scheme, []byte(cred)))
	}
	if f.tls() {
		d, err := f.tlsDialer(ctx)
		if err != nil {
			return nil, usageError{err}
		}
		opts = append(opts, framework.WithDialer(d))
	}
	client, err := framework.New(f.connect, opts...)
	var dns *net.DNSError
	if errors.Is(err, curator.ErrInvalidArgument) && !errors.As(err, &dns) { // a typo, not the network
		return nil, usageError{fmt.Errorf("bad --connect %q or --namespace %q: %w", f.connect, f.namespace, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot connect to ZooKeeper at %s: %w", f.connect, err)
	}
	wctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if err := client.BlockUntilConnected(wctx); err != nil {
		client.Close()
		if ctx.Err() != nil {
			return nil, errors.New("interrupted")
		}
		how := ""
		if f.tls() {
			how = " over TLS (is it ZooKeeper's secure port? does --tls-ca trust its certificate?)"
		}
		return nil, fmt.Errorf("cannot connect to ZooKeeper at %s within %v%s: %w", f.connect, f.timeout, how, err)
	}
	return client, nil
}

// op returns the context of one operation: bounded by --timeout.
func (f *connFlags) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, f.timeout)
}
