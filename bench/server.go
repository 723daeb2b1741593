package main

import (
	"fmt"

	"github.com/gocurator/curator/testing/zktest"
)

// startServer starts the one local ZooKeeper every peer runs against
// (testing/zktest: Debian's ZooKeeper 3.8 in a JVM of its own, on loopback;
// an ensemble of that many JVMs when members > 1; jvm: the JVM's settings,
// --server-jvm), unless --connect or ZK_CONNECT names one. It returns the
// connect string, what to tell about the server, and how to stop it.
func startServer(connect string, members int, jvm string) (string, string, func(), error) {
	if connect != "" {
		return connect, "external, " + connect, func() {}, nil
	}
	opts, desc := []zktest.Option(nil), "test JVM: C1 alone, serial GC"
	if jvm == "production" {
		opts, desc = []zktest.Option{zktest.WithProductionJVM(), zktest.WithHeap(512)}, "production JVM: default compilers and GC, 512 MB heap"
	}
	if members > 1 {
		cl, err := zktest.NewCluster(members, opts...)
		if err != nil {
			return "", "", nil, fmt.Errorf("starting a local ZooKeeper ensemble (or set --connect/ZK_CONNECT): %w", err)
		}
		return cl.ConnectString(), fmt.Sprintf("local (testing/zktest: %d-member ensemble, forceSync=no, loopback, %s)", members, desc), func() { cl.Close() }, nil
	}
	srv, err := zktest.NewServer(opts...)
	if err != nil {
		return "", "", nil, fmt.Errorf("starting a local ZooKeeper (or set --connect/ZK_CONNECT): %w", err)
	}
	return srv.ConnectString(), fmt.Sprintf("local (testing/zktest: standalone, forceSync=no, loopback, %s)", desc), func() { srv.Close() }, nil
}
