// Package framework is the Go counterpart of Apache Curator's
// CuratorFramework: a ZooKeeper client that recipes (and applications) can
// trust without reading its code.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// A Client owns one go-zookeeper connection and adds what go-zookeeper lacks:
//
//   - a context.Context on every call, and Curator's retry loop (RetryLoop)
//     around it (connection loss, operation timeout, session moved and
//     session expired are retried per a retry.Policy; everything else is
//     returned at once);
//   - connection states with Curator's meaning (ConnectionState: CONNECTED,
//     SUSPENDED, RECONNECTED, LOST), delivered in order to listeners
//     (ConnectionStateListener) that cannot stall the client, and LOST
//     declared by the client itself, since a partitioned client never
//     hears the server expire it: once disconnected, the session timeout
//     after it sent the last request the server answered, which is no
//     later than the server can expire the session (Curator counts from
//     its noticing the disconnect, up to two thirds of the timeout later);
//     then a new session is opened;
//   - Session values whose Done channel closes when the session is lost, so
//     that whatever lives in an ephemeral node (a lock, a lease) can tell;
//   - protected creates (Curator's withProtection: "_c_<uuid>-" names,
//     found again after a connection loss, accepted only if owned by the
//     current session, and deleted in the background if the caller gave
//     up) and guaranteed deletes (Curator's guaranteed(): retried in the
//     background until done);
//   - chroot (from the connect string) and namespaces, applied to every path
//     and stripped from every returned one; ACL providers (ACLProvider);
//     digest auth; a custom dialer (TLS);
//   - watches through a demultiplexer of ours: a waiter that gives up calls
//     Watch.Stop and nothing of it stays in the client, and at most one
//     server watch per node and kind is asked for; the client keeps the
//     session's watches and sets them again on reconnection itself
//     (go-zookeeper is never asked for one: its registry races,
//     go-zookeeper/zk#35);
//   - what go-zookeeper v1.0.4 cannot send, written by the client itself
//     on go-zookeeper's connection: persistent and persistent recursive
//     watches (AddWatch, Curator's PersistentWatcher; removed by Stop,
//     set again with SetWatches2 on a resumed connection) and several
//     nodes' data in one request (GetMany, ZooKeeper's multiRead).
//
// In Curator's terms: New with its Options is CuratorFrameworkFactory's
// builder(), Multi is transaction().forOperations(), and each call's
// OpOptions are the modifiers of Curator's operation builders (WithParents
// is creatingParentsIfNeeded, WithMode withMode, WithVersion withVersion).
//
// Errors wrap go-zookeeper's sentinels (errors.Is(err, zk.ErrNoNode) works)
// inside *OpError, which names the operation and the path, and the module's
// own sentinels (package curator): ErrClosed, ErrInvalidPath,
// ErrInvalidArgument, ErrConnectionLoss, ErrOperationTimeout,
// ErrSessionLost and ErrDeletePending. Invalid paths and arguments are
// rejected before any I/O. Per-operation options (OpOption) are one type
// for Create, Delete, Set and SetACL; an option an operation does not take
// is refused.
//
// # Metrics and traces
//
// The client and every recipe built on it record metrics and spans through
// OpenTelemetry's API (never its SDK): WithMeterProvider and
// WithTracerProvider give the providers (default: OpenTelemetry's global
// ones, which record nothing until the application installs an SDK), and
// the recipes use their client's. With nothing installed the hooks cost a
// few nanoseconds and allocate nothing; no span is started until a tracer
// provider is set. WithPathAttributes adds paths (a cardinality risk: see
// it). This is the one list of what is recorded; with the Prometheus
// exporter, names get "_seconds" or "_total" and dots become underscores
// (db_client_operation_duration_seconds, curator_lock_losses_total...).
//
// The client's metrics (instrumentation scope
// github.com/gocurator/curator/framework):
//
//   - db.client.operation.duration (Float64Histogram, s; buckets 0.001,
//     0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10): one sample per attempt of
//     the retry loop (so a retried call is several; the wait for a
//     connection and the sleeps between attempts are in none). Attributes:
//     db.system.name=zookeeper; db.operation.name (ZooKeeper's request:
//     create, delete, exists, getData, setData, getChildren, getACL,
//     setACL, sync, multi); server.address and server.port (the server the
//     connection is on); db.namespace (the chroot and namespace, when
//     there is one); on failure error.type (ZooKeeper's error name: NONODE,
//     NODEEXISTS, BADVERSION, NOTEMPTY, NOAUTH, SESSIONEXPIRED,
//     CONNECTIONLOSS, OPERATIONTIMEOUT...; timeout or canceled when the
//     context ended the attempt; _OTHER) and db.response.status_code
//     (ZooKeeper's code, "-101", when the server answered with one). An
//     attempt that makes several requests (a create making its parents, a
//     delete of children first) is one sample; a transaction the server
//     refused is an answered call (its results say which operation
//     failed); errors a recipe expects (NONODE of a predecessor gone) are
//     recorded as the server said them.
//   - zookeeper.client.session.transitions (Int64Counter, {transition}):
//     connection state changes; zookeeper.session.state = connected,
//     suspended, reconnected, lost, auth_failed.
//   - zookeeper.client.session.expirations (Int64Counter, {expiration}):
//     sessions lost by expiry; zookeeper.session.expiration.source =
//     server (the server said so) or simulated (the client declared it,
//     disconnected, the session timeout after it sent the last request the
//     server answered).
//   - zookeeper.client.guaranteed_delete.pending (Int64UpDownCounter,
//     {operation}): guaranteed deletes and protected-node clean-ups not
//     done yet, retried in the background (PendingBackground); no
//     attributes.
//
// The recipes' metrics (scopes github.com/gocurator/curator/recipes/locks,
// .../semaphore, .../multilock, .../leader), each with curator.recipe =
// mutex, read, write (the halves of a ReadWriteLock), semaphore (a
// lease), semaphore_mutex, multi_lock, election, latch or selector, and
// with WithPathAttributes curator.path (the recipe's path; a MultiLock's
// members' paths joined with ","):
//
//   - curator.lock.acquire.duration (Float64Histogram, s; buckets 0.001,
//     0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300): from the call
//     to its outcome, the wait in the process for the instance's turn
//     included; curator.lock.outcome = acquired, locked (a Try found it
//     held), timeout, canceled, error, with error.type on error
//     (lock_lost, node_vanished, session_lost, closed, busy, upgrade,
//     unsupported, invalid_argument, a ZooKeeper error name, _OTHER). A
//     reentrant Lock is none; AcquireN is one; a MultiLock is one of its
//     own and its members each theirs; for leaders each attempt to lead is
//     one (a Latch taking part again after a lost term makes a new one;
//     one closed while waiting is canceled).
//   - curator.lock.waiting (Int64UpDownCounter, {waiter}): acquisitions
//     under way.
//   - curator.lock.held (Int64UpDownCounter, {holding}): holdings (a
//     lock, each lease, a term of leadership) granted and neither
//     released nor lost: a lost lock stops counting at its loss, though
//     its Unlock is still due.
//   - curator.lock.hold.duration (Float64Histogram, s; the same buckets):
//     how long a holding lasted; curator.lock.release.reason = released,
//     lost (timed to the loss), closed (a leader closed while leading).
//   - curator.lock.losses (Int64Counter, {loss}): holdings lost, once
//     each, when Lost closes; curator.loss.reason = suspended (the
//     connection, under curator.LoseOnSuspend), session_lost (expired or
//     declared lost), node_deleted (found gone: deleted by someone, or
//     with a session the client had not yet seen expire), closed (the
//     client was closed while holding).
//
// The caches' and persistent nodes' metrics (scopes
// github.com/gocurator/curator/recipes/cache and .../nodes), with
// curator.recipe = cache or persistent_node and, with WithPathAttributes,
// curator.path (the cache's root, the node's path as given):
//
//   - curator.cache.size (Int64UpDownCounter, {node}): nodes held by
//     started caches; a closed cache counts none (its nodes stay readable).
//   - curator.cache.events (Int64Counter, {event}): events delivered,
//     once each whatever the number of listeners; curator.cache.event.type
//     = created, changed, deleted, initialized, rebuilt. A burst of
//     changes a slow consumer let coalesce is the one event it was told.
//   - curator.cache.rebuilds (Int64Counter, {rebuild}): full re-reads
//     begun after a session loss (a rebuilt event ends each that
//     finishes; a loss during a rebuild begins another).
//   - curator.node.recreations (Int64Counter, {node}): a PersistentNode's
//     node made again after it went (deleted by someone else, or gone with
//     a lost session); its first create is none. A steady rate means
//     something keeps deleting it. The node of a service instance
//     registered by discovery counts with curator.recipe = discovery and
//     curator.discovery.service (its service's name) instead: a
//     registration lost and restored.
//
// Service discovery's metric (scope github.com/gocurator/curator/discovery),
// with curator.recipe = discovery, curator.discovery.service (the
// service's name, always: a process watches a few services) and, with
// WithPathAttributes, curator.path (the service's node):
//
//   - curator.discovery.instances (Int64UpDownCounter, {instance}):
//     instances of a service held by started discovery Caches (a
//     Provider's included; a node whose bytes are no instance is none);
//     two caches of one service count each instance twice; a closed
//     cache counts none.
//
// The queues' metrics (scope github.com/gocurator/curator/recipes/queue),
// with curator.recipe = queue and, with WithPathAttributes, curator.path
// (the queue's path):
//
//   - curator.queue.depth (Int64UpDownCounter, {item}): item nodes in the
//     queues this process consumes, as each started consumer's last
//     listing saw them; a closed queue counts none.
//   - curator.queue.oldest.age (Float64Histogram, s): the age of each item
//     a consumer takes (from its put), the oldest due item of its queue at
//     that moment: a growing age means consumers fall behind.
//   - curator.queue.items (Int64Counter, {item}): items put and consumed
//     (curator.queue.op = put, consumed; a PutMulti counts each item).
//
// The atomic values' metrics (scope
// github.com/gocurator/curator/recipes/atomic), with curator.recipe =
// atomic and, with WithPathAttributes, curator.path (the value's path):
//
//   - curator.atomic.retries (Int64Counter, {retry}): compare-and-set
//     writes tried again after another writer came first (a call's tries
//     beyond its first, optimistic or promoted). A rate close to the
//     operations' means a hot counter.
//   - curator.atomic.promotions (Int64Counter, {promotion}): operations
//     promoted to the lock (WithPromotedToLock) after their optimistic
//     tries gave up.
//
// Spans, once a tracer provider is set:
//
//   - a CLIENT span per attempt of the retry loop, named after its
//     db.operation.name (getData, create...: never a path), with the
//     metric's attributes and zookeeper.session.id, zookeeper.path with
//     WithPathAttributes, and status Error with error.type and
//     db.response.status_code on failure;
//   - an INTERNAL span per acquisition and per release:
//     curator.lock.acquire and curator.lock.release (mutex, read, write,
//     semaphore_mutex, multi_lock), curator.semaphore.acquire and
//     curator.semaphore.release (leases), curator.leader.campaign and
//     curator.leader.release (election, latch, selector), with
//     curator.recipe, curator.path (opt-in), curator.lock.outcome and
//     error.type; a lock acquisition has an "enqueued" event with its
//     node's sequence number (curator.node.sequence). The ZooKeeper calls
//     of an acquisition are its children (a MultiLock's members' too); the
//     held context the caller gets is not. No span covers a holding: use
//     the histogram.
package framework
