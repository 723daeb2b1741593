package main

import (
	"fmt"

	"github.com/gocurator/curator/testing/zktest"
)

// startServer starts the one local ZooKeeper every peer runs against
// (testing/zktest: Debian's ZooKeeper 3.8 in a JVM of its own, on loopback),
// unless --connect or ZK_CONNECT names one. It returns the connect string,
// what to tell about the server, and how to stop it.
func startServer(connect string) (string, string, func(), error) {
	if connect != "" {
		return connect, "external, " + connect, func() {}, nil
	}
	srv, err := zktest.NewServer()
	if err != nil {
		return "", "", nil, fmt.Errorf("starting a local ZooKeeper (or set --connect/ZK_CONNECT): %w", err)
	}
	return srv.ConnectString(), "local (testing/zktest: standalone, forceSync=no, loopback)", func() { srv.Close() }, nil
}
