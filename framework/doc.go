// Package framework is the Go counterpart of Apache Curator's
// CuratorFramework: a ZooKeeper client that recipes (and applications) can
// trust without reading its code.
//
// A Client owns one go-zookeeper connection and adds what go-zookeeper lacks:
//
//   - a context.Context on every call, and Curator's retry loop around it
//     (connection loss, operation timeout, session moved and session expired
//     are retried per a retry.Policy; everything else is returned at once);
//   - connection states with Curator's meaning (CONNECTED, SUSPENDED,
//     RECONNECTED, LOST), delivered in order to listeners that cannot stall
//     the client, and LOST declared by the client itself after the session
//     timeout spent disconnected, since a partitioned client never hears the
//     server expire it; then a new session is opened;
//   - Session values whose Done channel closes when the session is lost, so
//     that whatever lives in an ephemeral node (a lock, a lease) can tell;
//   - protected creates (Curator's "_c_<uuid>-" names, found again after a
//     connection loss, accepted only if owned by the current session, and
//     deleted in the background if the caller gave up) and guaranteed
//     deletes (retried in the background until done);
//   - chroot (from the connect string) and namespaces, applied to every path
//     and stripped from every returned one; ACL providers; digest auth;
//     a custom dialer (TLS);
//   - watches through a demultiplexer of ours: a waiter that gives up calls
//     Watch.Stop and nothing of it stays in the client, and at most one
//     go-zookeeper watch per node and kind is outstanding.
//
// Errors wrap go-zookeeper's sentinels (errors.Is(err, zk.ErrNoNode) works)
// inside *OpError, which names the operation and the path, and the module's
// own sentinels (package curator): ErrClosed, ErrInvalidPath,
// ErrInvalidArgument, ErrConnectionLoss, ErrOperationTimeout,
// ErrSessionLost and ErrDeletePending. Invalid paths and arguments are
// rejected before any I/O. Per-operation options (OpOption) are one type
// for Create, Delete, Set and SetACL; an option an operation does not take
// is refused.
package framework
