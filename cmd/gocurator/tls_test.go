package main_test

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
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/testing/zktest"
)

// selfSigned writes a key and certificate for 127.0.0.1 (the server's
// keystore, PEM) and the certificate alone (the CA a client trusts).
func selfSigned(t *testing.T) (keystore, ca string) {
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
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	dir := t.TempDir()
	keystore, ca = filepath.Join(dir, "server.pem"), filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(keystore, append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), certPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return keystore, ca
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

// --tls-ca reaches ZooKeeper's secure client port; without it the command
// fails within --timeout.
func TestTLS(t *testing.T) {
	keystore, ca := selfSigned(t)
	port := freePort(t)
	zktest.StartServer(t,
		zktest.WithConfig("secureClientPort", strconv.Itoa(port)),
		zktest.WithJVMProperty("zookeeper.serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory"),
		zktest.WithJVMProperty("zookeeper.ssl.keyStore.location", keystore),
		zktest.WithJVMProperty("zookeeper.ssl.keyStore.type", "PEM"),
		zktest.WithJVMProperty("zookeeper.ssl.clientAuth", "none"))
	addr := "127.0.0.1:" + strconv.Itoa(port)
	r := gocurator(t, "", nil, "inspect", "/", "--json", "--connect", addr, "--tls-ca", ca, "--timeout", "30s")
	if r.code != 0 || !strings.Contains(r.stdout, `"path": "/"`) {
		t.Fatalf("inspect over TLS: %s", r)
	}
	r = gocurator(t, "", nil, "inspect", "/", "--connect", addr, "--timeout", "3s")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot connect") {
		t.Errorf("inspect of the TLS port in plain TCP: %s; want exit 1", r)
	}
	r = gocurator(t, "", nil, "inspect", "/", "--connect", addr, "--tls-ca", keystore+".missing", "--timeout", "3s")
	if r.code != 2 {
		t.Errorf("a --tls-ca that does not exist: %s; want exit 2", r)
	}
}
