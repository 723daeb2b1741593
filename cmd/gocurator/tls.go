package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/gocurator/curator/framework"
)

// tlsDialer returns a dialer for ZooKeeper's secure client port, from
// --tls-ca (else the system's roots) and --tls-cert/--tls-key.
//
// The framework resolves host names itself and dials addresses, so the
// certificate is checked against the host name the address came from
// (resolved here too), and against the address itself when it came from
// none (an IP in --connect).
func (f *connFlags) tlsDialer(ctx context.Context) (framework.Dialer, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.tlsCA != "" {
		pem, err := os.ReadFile(f.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", f.tlsCA)
		}
		cfg.RootCAs = pool
	}
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	names := hostNames(ctx, f.connect, f.timeout)
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		c.ServerName = host
		if name, ok := names[host]; ok {
			c.ServerName = name
		}
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, addr, c)
	}, nil
}

// hostNames maps the addresses the host names of a connect string resolve
// to back to those names.
func hostNames(ctx context.Context, connect string, timeout time.Duration) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names := map[string]string{}
	hosts, _, _ := strings.Cut(connect, "/")
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		host, _, err := net.SplitHostPort(h)
		if err != nil {
			host = h
		}
		if host == "" || net.ParseIP(host) != nil {
			continue
		}
		addrs, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil {
			continue // the framework says so when it dials
		}
		for _, a := range addrs {
			if _, taken := names[a]; !taken {
				names[a] = host
			}
		}
	}
	return names
}
