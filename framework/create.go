package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator"
)

// CreateMode is the kind of node Create makes.
type CreateMode int

const (
	ModePersistent CreateMode = iota
	ModeEphemeral
	ModePersistentSequential
	ModeEphemeralSequential
	// ModeContainer: removed by the server once its last child is gone.
	ModeContainer
	// ModePersistentTTL: removed by the server after a TTL without children
	// or changes (the server must run with zookeeper.extendedTypesEnabled).
	ModePersistentTTL
	ModePersistentSequentialTTL
)

func (m CreateMode) valid() bool { return m >= ModePersistent && m <= ModePersistentSequentialTTL }

// Ephemeral reports whether nodes of this mode die with their session.
func (m CreateMode) Ephemeral() bool { return m == ModeEphemeral || m == ModeEphemeralSequential }

// Sequential reports whether the server appends a sequence number.
func (m CreateMode) Sequential() bool {
	return m == ModePersistentSequential || m == ModeEphemeralSequential || m == ModePersistentSequentialTTL
}

func (m CreateMode) flags() int32 {
	switch m {
	case ModeEphemeral:
		return zk.FlagEphemeral
	case ModePersistentSequential:
		return zk.FlagSequence
	case ModeEphemeralSequential:
		return zk.FlagEphemeralSequential
	case ModeContainer:
		return zk.FlagContainer
	case ModePersistentTTL:
		return zk.FlagTTL
	case ModePersistentSequentialTTL:
		return zk.FlagPersistentSequentialWithTTL
	}
	return zk.FlagPersistent
}

// Created describes a node Create made.
type Created struct {
	// Path is the node's path, as the caller names paths (sequence included).
	Path string
	// Session is the session an ephemeral node belongs to (nil otherwise):
	// the node lives until Session.Done() is closed.
	Session *Session
	// Parent is, with WithParentStat, the parent's stat read right behind
	// the create on the same connection (so after it: its NumChildren
	// counts the new node); nil when it could not be read that way (the
	// create was retried, a parent had to be made, the connection went).
	Parent *Stat
	// Children are, with WithParentChildren, the parent's children listed
	// by that same read (our node's name among them, unless our session was
	// lost meanwhile: go-zookeeper may then send the read in a new session);
	// nil when Parent is.
	Children []string
	// Zxid is, with Parent, the create's transaction zxid (from its
	// reply), 0 if unknown. Parent.Pzxid == Zxid proves that no child of
	// the parent was made or deleted between the create and the read of
	// Parent (the server sets pzxid at each): Parent.NumChildren then
	// counts the new node and those there before it, exactly.
	Zxid int64
}

// Create makes a node and returns its path (with the sequence number for
// sequential modes). See CreateNode.
func (c *Client) Create(ctx context.Context, path string, data []byte, opts ...OpOption) (string, error) {
	n, err := c.CreateNode(ctx, path, data, opts...)
	return n.Path, err
}

// CreateNode makes a node in the retry loop. A plain create that failed for
// connection reasons is retried only where that is safe: a retried create of
// a non-sequential node can return zk.ErrNodeExists if the first attempt
// had in fact succeeded, and a retried sequential create can leave a
// duplicate; use WithProtection to be exact (recipes always do).
//
// In a sequential mode the path may end with "/": the node is named by its
// sequence number alone (and its protection, if protected), "/" naming one
// directly under the root (of the chroot and namespace). A path in
// ZooKeeper's own subtree is refused before any I/O (CheckCreatePath).
func (c *Client) CreateNode(ctx context.Context, path string, data []byte, opts ...OpOption) (Created, error) {
	p, err := c.planCreate(ctx, path, data, opts)
	if err != nil {
		return Created{}, err
	}
	if p.co.parentStat {
		p.parent = c.readParentBehind(p)
	}
	v, pending, err := callPending(c, ctx, "create", p.userPath, p.attempt)
	return p.created(v, pending, err)
}

// created is CreateNode's end, apart so that CreateNode's frame, which
// every waiter's stack holds while its create is in flight, stays small.
//
//go:noinline
func (p *createPlan) created(v createResult, pending <-chan outcome[createResult], err error) (Created, error) {
	c := p.c
	var (
		parent   *Stat
		children []string
		zxid     int64
	)
	if p.parent != nil {
		parent, children, zxid = p.parent.result(err == nil && v.first)
	}
	if err != nil {
		if p.co.protected && (pending != nil || retryable(err) || ctxErr(err)) {
			c.cleanupProtected(p.parentFull, p.id, pending)
		}
		return Created{}, err
	}
	n := Created{Path: c.paths.user(v.path), Parent: parent, Children: children, Zxid: zxid}
	if p.co.mode.Ephemeral() {
		n.Session = c.sessionFor(v.sid)
	}
	return n, nil
}

// createPlan is one Create, checked and named: what each attempt of the
// retry loop needs. (Planning apart also keeps the caller's stack short
// while the attempt runs: a thousand waiters each make a create.)
type createPlan struct {
	c          *Client
	co         opOptions
	userPath   string
	full       string // the server path of the node (protected name included)
	parentFull string
	id         string // the protection id, if protected
	data       []byte
	acl        []ACL
	retry      bool        // an attempt ran already
	parent     *parentRead // WithParentStat
}

// errCreateRoot refuses a create of "/" in a mode that is not sequential:
// it names no node.
var errCreateRoot = fmt.Errorf("%w: cannot create / (a sequential mode makes a node under it)", curator.ErrInvalidPath)

// planCreate checks a create (before any I/O) and names its node. A
// create of "/" in a sequential mode makes a node directly under the root
// (of the chroot and namespace) named by its sequence number, after
// "_c_<uuid>-" if protected: Curator's name for it without a namespace
// (with one, Curator makes "/_c_<uuid>-<namespace>", beside it).
func (c *Client) planCreate(ctx context.Context, path string, data []byte, opts []OpOption) (*createPlan, error) {
	co, err := opOpts("create", createOpts, opts)
	if err != nil {
		return nil, &OpError{"create", path, err}
	}
	ttlMode := co.mode == ModePersistentTTL || co.mode == ModePersistentSequentialTTL
	if ttlMode != (co.ttl > 0) || co.ttl < 0 {
		return nil, &OpError{"create", path, fmt.Errorf("%w: a TTL (%v) goes with, and only with, a TTL mode", curator.ErrInvalidArgument, co.ttl)}
	}
	if err := c.paths.checkCreate(path, co.mode.Sequential()); err != nil {
		return nil, &OpError{"create", path, err}
	}
	if ctx == nil {
		return nil, &OpError{"create", path, fmt.Errorf("%w: nil context", curator.ErrInvalidArgument)}
	}
	if co.parentStat && !co.protected {
		return nil, &OpError{"create", path, fmt.Errorf("%w: WithParentStat and WithParentChildren need WithProtection", curator.ErrInvalidArgument)}
	}
	p := &createPlan{c: c, co: co, userPath: path, data: data}
	if co.protected {
		p.id = NewProtectedID()
		path = JoinPath(ParentPath(path), ProtectedName(p.id, NodeName(path)))
	}
	p.full = c.paths.node(path)
	p.parentFull = c.paths.full(ParentPath(path))
	p.acl = co.acl
	if p.acl == nil {
		p.acl = c.opts.acl.ForPath(c.paths.aclPath(p.full))
	}
	if err := c.checkSize("create", p.userPath, createSize(p.full, data, p.acl, co.ttl > 0)); err != nil {
		return nil, err
	}
	if err := c.ensureRoot(ctx); err != nil {
		return nil, &OpError{"create", p.userPath, err}
	}
	return p, nil
}

// attempt is one attempt of the create in the retry loop. A protected
// create that is tried again first looks for the node of an earlier
// attempt whose reply was lost.
func (p *createPlan) attempt(conn *zk.Conn) (createResult, error) {
	sid := conn.SessionID()
	first := !p.retry
	if p.co.protected && p.retry {
		if r, ok, err := p.findEarlier(conn, sid); ok || err != nil {
			return r, err
		}
	}
	p.retry = true
	if first && p.parent != nil {
		p.parent.conn.Store(conn) // before the create is queued: the reader sends behind it, on it
	}
	path, once, err := p.createOnce(conn)
	if err != nil {
		return createResult{}, err
	}
	if p.co.mode.Ephemeral() && conn.SessionID() != sid {
		// The session changed while the create was under way: ask the
		// server whose node it is.
		ok, st, err := conn.Exists(path)
		if err != nil {
			return createResult{}, err
		}
		if ok {
			sid = st.EphemeralOwner
		}
	}
	return createResult{path, sid, first && once}, nil
}

// findEarlier looks for the node an earlier attempt may have made (its
// reply lost): ok when it is found and adopted.
func (p *createPlan) findEarlier(conn *zk.Conn, sid int64) (r createResult, ok bool, err error) {
	c := p.c
	if protectedRetryHook != nil {
		protectedRetryHook()
	}
	found, err := findProtected(conn, p.parentFull, p.id)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return r, false, err
	}
	if found == "" {
		return r, false, nil
	}
	if !p.co.mode.Ephemeral() {
		return createResult{found, 0, false}, true, nil
	}
	exists, st, err := conn.Exists(found)
	if err != nil {
		return r, false, err
	}
	// Adopt the node only if it is of our CURRENT session: the
	// connection's, and the one the client has not declared lost. A node
	// of the previous session, which the server has not expired yet, must
	// not be adopted (CURATOR-498).
	if exists && st.EphemeralOwner == sid && sid == c.currentSessionID() {
		return createResult{found, sid, false}, true, nil
	}
	if exists { // made in a session that is gone: never adopt it (CURATOR-498)
		// Delete it before creating: a non-sequential node would
		// otherwise collide with it (zk.ErrNodeExists).
		if err := conn.Delete(found, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			if retryable(classify(err, c.isClosed())) {
				return r, false, err
			}
			c.deleteInBackground(found)
		}
	}
	return r, false, nil
}

// protectedRetryHook, if set (tests only), runs at the start of every
// retry of a protected create, before it looks for its node.
var protectedRetryHook func()

// currentSessionID is the id of the session the client holds now, 0 when
// it has none (declared lost, or not yet connected).
func (c *Client) currentSessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil || c.session.Lost() { // Session() keeps the last lost one
		return 0
	}
	return c.session.id
}

// createResult is what one create attempt made: the server path and the
// session that owns it (ephemeral modes).
type createResult struct {
	path  string
	sid   int64
	first bool // made by the first create request of the first attempt
}

func ctxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// findProtected returns the full path of the child of parent whose name
// carries the protection id, or "".
func findProtected(conn *zk.Conn, parent, id string) (string, error) {
	children, _, err := conn.Children(parent)
	if err != nil {
		return "", err
	}
	head := ProtectedPrefix + id + "-"
	for _, ch := range children {
		if strings.HasPrefix(ch, head) {
			return JoinPath(parent, ch), nil
		}
	}
	return "", nil
}

// cleanupProtected deletes, in the background, the node a failed protected
// create may have made (Curator's FindAndDeleteProtectedNodeInBackground).
// If an attempt is still in flight, it waits for its outcome first.
func (c *Client) cleanupProtected(parentFull, id string, pending <-chan outcome[createResult]) {
	find := func() {
		c.bg.submit("find and delete protected "+id, func(ctx context.Context) error {
			found, err := call(c, ctx, "find protected", c.paths.user(parentFull), func(conn *zk.Conn) (string, error) {
				return findProtected(conn, parentFull, id)
			})
			if errors.Is(err, zk.ErrNoNode) || (err == nil && found == "") {
				return nil
			}
			if err != nil {
				return err
			}
			return c.deleteFull(ctx, found, -1)
		})
	}
	if pending == nil {
		find()
		return
	}
	// Until the attempt's outcome is in, the clean-up counts as pending
	// background work, so that WaitBackground waits for it too.
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.bg.hold()
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer c.bg.release()
		select {
		case <-pending:
			find()
		case <-c.ctx.Done():
		}
	}()
}

// createOnce makes p's node, and its parents if asked, on one connection.
// once says whether the first create request made it (no parent was
// missing). (Its frames are on every waiting contender's stack at its
// deepest: keep them small, issue 16.)
func (p *createPlan) createOnce(conn *zk.Conn) (path string, once bool, err error) {
	path, err = p.send(conn)
	if errors.Is(err, zk.ErrNoNode) && p.co.parents != noParents {
		return p.createParents(conn)
	}
	return path, err == nil, err
}

// parentRounds bounds how often a create makes its parents again because
// one went between their making and the create.
const parentRounds = 8

// createParents makes p's parents, then p's node, again while a parent
// goes in between: the server reaps an emptied container at any moment
// (an ancestor too, once the reaping of its last child emptied it), and a
// user may delete one. Curator makes the parents once and gives up with
// NoNode (CreateBuilderImpl); an election's new node after its session
// expired met that in our CI (its path, emptied by the expiry, reaped
// while the new session made the parents).
//
//go:noinline
func (p *createPlan) createParents(conn *zk.Conn) (path string, once bool, err error) {
	for range parentRounds {
		err = p.c.mkdirs(conn, ParentPath(p.full), p.co.parents == containerParents)
		if err != nil && !errors.Is(err, zk.ErrNoNode) { // NoNode: an ancestor went meanwhile
			return "", false, err
		}
		if err == nil {
			if testHookParents != nil {
				testHookParents(p.full)
			}
			path, err = p.send(conn)
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return path, false, err
		}
	}
	return "", false, err
}

// testHookParents, set only by tests, runs before a create of a node or
// of a missing parent that follows the making of parents (its argument:
// the server path to be created).
var testHookParents func(full string)

// send sends p's create request once.
func (p *createPlan) send(conn *zk.Conn) (string, error) {
	switch p.co.mode {
	case ModeContainer:
		return conn.CreateContainer(p.full, p.data, zk.FlagContainer, p.acl)
	case ModePersistentTTL, ModePersistentSequentialTTL:
		return conn.CreateTTL(p.full, p.data, p.co.mode.flags(), p.acl, p.co.ttl)
	default:
		return conn.Create(p.full, p.data, p.co.mode.flags(), p.acl)
	}
}

// mkdirs makes every missing node of a server path, top down, with empty
// data and the ACL provider's ACL (Curator's ZKPaths.mkdirs).
func (c *Client) mkdirs(conn *zk.Conn, full string, container bool) error {
	if full == "/" || full == "" {
		return nil
	}
	for i := 1; i <= len(full); i++ {
		if i < len(full) && full[i] != '/' {
			continue
		}
		p := full[:i]
		ok, _, err := conn.Exists(p)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		acl := c.opts.acl.ForPath(c.paths.aclPath(p))
		if testHookParents != nil {
			testHookParents(p)
		}
		// The chroot and namespace stay persistent, as ensureRoot makes
		// them, also when made again here after someone deleted them: a
		// container namespace would be reaped under its clients once empty
		// (Curator makes its namespace a container; README, Curator to Go).
		if container && len(p) > len(c.paths.prefix) {
			_, err = conn.CreateContainer(p, nil, zk.FlagContainer, acl)
		} else {
			_, err = conn.Create(p, nil, zk.FlagPersistent, acl)
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// ensureRoot makes the chroot and namespace nodes once (persistent, so an
// empty namespace is not reaped under the client). A failure is retried on
// the next create.
func (c *Client) ensureRoot(ctx context.Context) error {
	if c.paths.prefix == "" || c.rootReady.Load() {
		return nil
	}
	_, err := call(c, ctx, "create namespace", "/", func(conn *zk.Conn) (struct{}, error) {
		return struct{}{}, c.mkdirs(conn, c.paths.prefix, false)
	})
	if err != nil {
		var oe *OpError
		if errors.As(err, &oe) {
			return oe.Err
		}
		return err
	}
	c.rootReady.Store(true)
	return nil
}
