package faults_test

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

// The framework's dialer option reaches ZooKeeper's secure client port
// (Netty, TLS) of Debian's ZooKeeper 3.8, and a lock works over it.
func TestFaultsTLS(t *testing.T) {
	srv := testenv.StartTLSServer(t)
	tlsDial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		d := &net.Dialer{Timeout: timeout}
		return tls.DialWithDialer(d, network, addr, &tls.Config{RootCAs: srv.Pool, MinVersion: tls.VersionTLS12})
	}
	c := connect(t, srv.Addr, framework.WithDialer(tlsDial))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := locks.NewMutex(c, "/faults/tls")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Do(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// A client that does not trust the certificate is refused.
	bad, err := framework.New(srv.Addr, framework.WithSessionTimeout(testenv.SessionTimeout),
		framework.WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, addr, &tls.Config{MinVersion: tls.VersionTLS12})
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	bctx, bcancel := context.WithTimeout(ctx, 2*time.Second)
	defer bcancel()
	if err := bad.BlockUntilConnected(bctx); err == nil {
		t.Fatal("connected without trusting the server's certificate")
	}
}
