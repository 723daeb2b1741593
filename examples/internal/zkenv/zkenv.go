// Package zkenv gives the example programs a ZooKeeper: the ensemble named
// by ZK_CONNECT (each run in a fresh chroot of its own), or else a local
// server started through the testing harness and stopped at the end.
package zkenv

import (
	"fmt"
	"os"

	"github.com/gocurator/curator/testing/zktest"
)

// Server returns the ZooKeeper to use and a description of where it is.
// Close the server at the end.
func Server() (*zktest.Server, string, error) {
	if c := os.Getenv("ZK_CONNECT"); c != "" {
		s, err := zktest.NewExternal(c)
		if err != nil {
			return nil, "", fmt.Errorf("ZK_CONNECT=%s: %w", c, err)
		}
		return s, "ZK_CONNECT", nil
	}
	s, err := zktest.NewServer()
	if err != nil {
		return nil, "", err
	}
	return s, "started locally", nil
}

// CheckExpiry checks that the examples that expire a session on purpose
// (zktest.ExpireSession) can do so on srv: that the server answers the
// four-letter word cons. A local server does; an ensemble named by
// ZK_CONNECT answers it only if its zoo.cfg lists cons in
// 4lw.commands.whitelist (ZooKeeper 3.5 and later allow only srvr by
// default).
func CheckExpiry(srv *zktest.Server) error {
	if !srv.External() {
		return nil
	}
	if _, err := srv.Sessions(); err != nil {
		return fmt.Errorf("this example expires a session, which needs the ZK_CONNECT server to answer the four-letter word cons: %w; or unset ZK_CONNECT to use a local ZooKeeper", err)
	}
	return nil
}

// Start is Server for a program: it prints where ZooKeeper is and exits on
// failure. Close the server at the end.
func Start() *zktest.Server {
	s, where, err := Server()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("ZooKeeper %s (%s)\n", s.ConnectString(), where)
	return s
}
