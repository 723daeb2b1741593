package framework_test

import (
	"crypto/tls"
	"crypto/x509"
	"log"
	"net"
	"os"
	"time"

	"github.com/gocurator/curator/framework"
)

// A client of ZooKeeper's secure port (secureClientPort, with
// serverCnxnFactory=NettyServerCnxnFactory on the servers). The dialer is
// called once per connection attempt with one server's "host:port";
// tls.DialWithDialer derives ServerName from it when the config leaves it
// empty, so each server of the ensemble is verified against its own name.
// Not run: it needs servers with TLS (the faults package tests one).
func ExampleWithDialer() {
	pem, err := os.ReadFile("/etc/zookeeper/tls/ca.pem")
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		log.Fatal("no CA certificate in ca.pem")
	}
	conf := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12} // no ServerName: one per server
	dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, conf)
	}
	client, err := framework.New("zk1.example:2281,zk2.example:2281,zk3.example:2281",
		framework.WithDialer(dial))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}
