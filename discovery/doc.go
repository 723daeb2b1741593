// Package discovery is Curator's service discovery (curator-x-discovery
// 5.x) for Go: services register instances under a base path, and clients
// find them by name, through a query, a Cache or a Provider. The layout
// and the bytes are Curator's, so Go and Java services share one registry
// (a Java ServiceDiscovery, ServiceCache and ServiceProvider see Go's
// instances, and the reverse; the interop tests prove both ways).
//
// Instances carry a payload of a type parameter T, as JSON; a Java
// reader's payload class goes in Instance.PayloadClass. Dynamic instances
// are ephemeral nodes kept by recipes/nodes' PersistentNode: back after a
// session loss, never doubled, never flapping on a reconnection. A gRPC
// resolver on this package is the module
// github.com/gocurator/curator/discovery/grpc.
package discovery
