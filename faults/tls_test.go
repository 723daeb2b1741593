package faults_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// selfSigned writes a PEM key+certificate for 127.0.0.1 and returns its
// path and a pool that trusts it.
func selfSigned(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "zktest"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pemData := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	p := filepath.Join(t.TempDir(), "server.pem")
	if err := os.WriteFile(p, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return p, pool
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The framework's dialer option reaches ZooKeeper's secure client port
// (Netty, TLS) of Debian's ZooKeeper 3.8, and a lock works over it.
func TestFaultsTLS(t *testing.T) {
	pemPath, pool := selfSigned(t)
	port := freePort(t)
	srv := zktest.StartServer(t,
		zktest.WithConfig("secureClientPort", strconv.Itoa(port)),
		zktest.WithJVMProperty("zookeeper.serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory"),
		zktest.WithJVMProperty("zookeeper.ssl.keyStore.location", pemPath),
		zktest.WithJVMProperty("zookeeper.ssl.keyStore.type", "PEM"),
		zktest.WithJVMProperty("zookeeper.ssl.clientAuth", "none"))
	_ = srv
	tlsDial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		d := &net.Dialer{Timeout: timeout}
		return tls.DialWithDialer(d, network, addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	}
	c := connect(t, "127.0.0.1:"+strconv.Itoa(port), framework.WithDialer(tlsDial))
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
	bad, err := framework.New("127.0.0.1:"+strconv.Itoa(port), framework.WithSessionTimeout(testenv.SessionTimeout),
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
