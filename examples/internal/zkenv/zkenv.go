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
