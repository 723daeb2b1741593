// Package faults is gocurator's fault suite: it has no API, only tests
// (go test ./faults/), which drive the recipes through real faults on a
// real 3-node ZooKeeper ensemble (leader and follower kills, partitions
// shorter and longer than the session timeout, session expiry, a holder
// process killed with SIGKILL) and check that no fault yields two
// holders, a stuck waiter, an orphaned node, a leaked watch or goroutine.
// See docs/testing.md.
package faults
