// Package interop is the Curator interop suite: it has no API, only tests
// (go test ./interop/), which show that gocurator and Apache Curator 5.4
// (Debian's jars) share locks, read-write locks, semaphores, barriers and
// leader elections on the same ZooKeeper paths. See
// docs/migrating-from-curator.md, "Running mixed with Curator".
package interop
