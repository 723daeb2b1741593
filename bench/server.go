package main

import (
	"fmt"

	"github.com/gocurator/curator/testing/zktest"
)

// startServer starts the one local ZooKeeper every peer runs against
// (testing/zktest: Debian's ZooKeeper 3.8 in a JVM of its own, on loopback;
// an ensemble of that many JVMs when members > 1), unless --connect or
// ZK_CONNECT names one. It returns the connect string, what to tell about
// the server, and how to stop it.
func startServer(connect string, members int) (string, string, func(), error) {
	if connect != "" {
		return connect, "external, " + connect, func() {}, nil
	}
	if members > 1 {
		cl, err := zktest.NewCluster(members)
		if err != nil {
			return "", "", nil, fmt.Errorf("starting a local ZooKeeper ensemble (or set --connect/ZK_CONNECT): %w", err)
		}
		return cl.ConnectString(), fmt.Sprintf("local (testing/zktest: %d-member ensemble, forceSync=no, loopback)", members), func() { cl.Close() }, nil
	}
	srv, err := zktest.NewServer()
	if err != nil {
		return "", "", nil, fmt.Errorf("starting a local ZooKeeper (or set --connect/ZK_CONNECT): %w", err)
	}
	return srv.ConnectString(), "local (testing/zktest: standalone, forceSync=no, loopback)", func() { srv.Close() }, nil
}
