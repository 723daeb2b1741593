package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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

	"github.com/gocurator/curator/testing/zktest"
)

// TLS is what a test needs of a server started by StartTLSServer.
type TLS struct {
	Addr     string         // the secure client port: 127.0.0.1:<port>
	Keystore string         // the server's key and certificate (PEM)
	CA       string         // the certificate alone (PEM): the CA a client trusts
	Pool     *x509.CertPool // a pool that trusts the certificate
}

// StartTLSServer starts a server of the test's own (stopped at clean-up)
// with a secure client port (Netty, TLS, no client authentication) on a
// free loopback port, and a self-signed certificate for 127.0.0.1.
func StartTLSServer(t testing.TB) TLS {
	t.Helper()
	s := selfSigned(t)
	port := freePort(t)
	zktest.StartServer(t,
		zktest.WithConfig("secureClientPort", strconv.Itoa(port)),
		zktest.WithJVMProperty("zookeeper.serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory"),
		zktest.WithJVMProperty("zookeeper.ssl.keyStore.location", s.Keystore),
		zktest.WithJVMProperty("zookeeper.ssl.keyStore.type", "PEM"),
		zktest.WithJVMProperty("zookeeper.ssl.clientAuth", "none"))
	s.Addr = "127.0.0.1:" + strconv.Itoa(port)
	return s
}

// selfSigned writes a key and certificate for 127.0.0.1 (the server's
// keystore, PEM) and the certificate alone (the CA a client trusts), and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t testing.TB) TLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gocurator-test"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	dir := t.TempDir()
	s := TLS{Keystore: filepath.Join(dir, "server.pem"), CA: filepath.Join(dir, "ca.pem"), Pool: x509.NewCertPool()}
	if err := os.WriteFile(s.Keystore, append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), certPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.CA, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s.Pool.AddCert(cert)
	return s
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
