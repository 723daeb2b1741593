// Package faults is gocurator's fault suite: it drives the recipes through
// real faults on a real 3-node ZooKeeper ensemble (leader and follower
// killed and restarted, clients partitioned for less and more than the
// session timeout, sessions expired, a holder process killed with SIGKILL,
// stalled listeners) and checks, on every run, that:
//
//   - a mutex never has two holders that were not told of a loss, checked by
//     a resource that accepts work only with a fencing token higher than the
//     last it saw, and a semaphore never grants more than its maximum;
//   - every contender acquires again once the faults stop;
//   - after all clients close, no lock, lease or member node is left, the
//     servers hold no watch, and no goroutine is left in the test process.
//
// It has only tests: run it with `go test -race ./faults/` (part of `make
// test`). GOCURATOR_SOAK=5m runs the fault cycle for that long instead of once.
package faults
