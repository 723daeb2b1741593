package framework

import (
	"fmt"
	"strings"
	"time"

	"github.com/gocurator/curator"
)

// OpOption configures one operation: Create (and CreateNode), Delete (and
// DeleteInBackground), Set or SetACL. Each operation takes the options that
// apply to it, listed with each option; one that does not apply (WithMode
// given to Delete, say) is refused before any I/O with an error wrapping
// curator.ErrInvalidArgument. Without options every operation does what
// Curator's builder does without modifiers.
type OpOption func(*opOptions)

// optionKind is one option, as a bit, so that an operation can tell the
// options it takes from the others.
type optionKind uint16

const (
	optMode optionKind = 1 << iota
	optProtection
	optParents
	optACL
	optTTL
	optVersion
	optGuarantee
	optChildren
	optIgnoreMissing
	optParentStat
	optSendOnce
)

// The options each operation takes.
const (
	createOpts = optMode | optProtection | optParents | optACL | optTTL | optParentStat
	deleteOpts = optVersion | optGuarantee | optChildren | optIgnoreMissing
	setOpts    = optVersion | optSendOnce
)

var optionNames = []string{"WithMode", "WithProtection", "WithParents/WithParentContainers", "WithACL", "WithTTL",
	"WithVersion", "WithGuarantee", "WithChildren", "WithIgnoreMissing", "WithParentStat/WithParentChildren",
	"WithSendOnce"}

type parentsMode int

const (
	noParents parentsMode = iota
	persistentParents
	containerParents
)

type opOptions struct {
	given optionKind
	err   error

	mode      CreateMode
	protected bool
	parents   parentsMode
	acl       []ACL
	ttl       time.Duration

	parentStat     bool
	parentChildren bool // WithParentChildren

	version       int32
	guaranteed    bool
	children      bool
	ignoreMissing bool
	sendOnce      bool
}

func (o *opOptions) set(k optionKind) { o.given |= k }

func (o *opOptions) fail(format string, args ...any) { failArg(&o.err, format, args...) }

// opOpts applies opts for op, which takes the options in allowed.
func opOpts(op string, allowed optionKind, opts []OpOption) (opOptions, error) {
	o := opOptions{version: -1}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.err != nil {
		return o, o.err
	}
	if bad := o.given &^ allowed; bad != 0 {
		var names []string
		for i, n := range optionNames {
			if bad&(1<<i) != 0 {
				names = append(names, n)
			}
		}
		return o, fmt.Errorf("%w: %s does not apply to %s", curator.ErrInvalidArgument, strings.Join(names, ", "), op)
	}
	return o, nil
}

// WithMode sets a created node's mode (default ModePersistent). Create.
func WithMode(m CreateMode) OpOption {
	return func(o *opOptions) {
		o.set(optMode)
		if !m.valid() {
			o.fail("create mode %d", m)
		}
		o.mode = m
	}
}

// WithProtection is Curator's protected mode: the node's name gets a
// "_c_<uuid>-" prefix, and when a create fails for connection reasons the
// client looks for the node by that prefix before trying again, accepting an
// ephemeral one only if its owner is the current session (CURATOR-498).
// If the caller gives up (context done, retries exhausted) the node, if it
// was in fact created, is deleted in the background. Default: off. Create.
func WithProtection() OpOption {
	return func(o *opOptions) { o.set(optProtection); o.protected = true }
}

// WithParents creates missing parent nodes as persistent nodes with empty
// data (Curator's creatingParentsIfNeeded). Default: a missing parent is
// zk.ErrNoNode. Create.
func WithParents() OpOption {
	return func(o *opOptions) { o.set(optParents); o.parents = persistentParents }
}

// WithParentContainers creates missing parent nodes as container nodes, so
// the server removes them once they are empty (Curator's
// creatingParentContainersIfNeeded). Default: a missing parent is
// zk.ErrNoNode. Create.
func WithParentContainers() OpOption {
	return func(o *opOptions) { o.set(optParents); o.parents = containerParents }
}

// WithACL sets a created node's ACL (default: the client's ACLProvider's,
// WithACLProvider). Create.
func WithACL(acl ...ACL) OpOption {
	return func(o *opOptions) {
		o.set(optACL)
		if len(acl) == 0 {
			o.fail("empty ACL")
		}
		o.acl = acl
	}
}

// WithTTL sets the TTL of a ModePersistentTTL or ModePersistentSequentialTTL
// node (and is required by them). Create.
func WithTTL(d time.Duration) OpOption {
	return func(o *opOptions) { o.set(optTTL); o.ttl = d }
}

// WithParentStat makes a protected create read its parent's stat too, in
// the same round trip: the read is sent right behind the create, so
// ZooKeeper, which answers a session's requests in order, reads it after
// the create (Created.Parent; its NumChildren counts the new node). A lock
// whose node is its parent's only child holds without listing the queue.
// It needs WithProtection (only a protected create is told apart on the
// wire). Default: off. Create.
func WithParentStat() OpOption {
	return func(o *opOptions) { o.set(optParentStat); o.parentStat = true }
}

// WithParentChildren is WithParentStat whose read of the parent lists its
// children too (Created.Children, which include the new node unless its
// session was lost meanwhile) at no extra round trip: a lock's first
// reading of its queue comes with its create. Create.
func WithParentChildren() OpOption {
	return func(o *opOptions) { o.set(optParentStat); o.parentStat, o.parentChildren = true, true }
}

// WithVersion makes the operation succeed only if the node's version (for
// SetACL, its ACL version) matches; otherwise it fails with
// zk.ErrBadVersion. Default -1: any version. Delete, Set, SetACL.
func WithVersion(v int32) OpOption {
	return func(o *opOptions) {
		o.set(optVersion)
		if v < -1 {
			o.fail("version %d", v)
		}
		o.version = v
	}
}

// WithGuarantee is Curator's guaranteed delete: if the delete cannot be
// confirmed for connection reasons (or ctx ends first), the client keeps
// deleting in the background, on every reconnection, until the node is gone
// (zk.ErrNoNode ends it, CURATOR-42) or the client is closed. The caller
// still gets an error (wrapping curator.ErrDeletePending, as
// *DeletePendingError): the delete is not done yet (CURATOR-678), and it
// can wait for it. Default: off. Delete (DeleteInBackground implies it).
func WithGuarantee() OpOption {
	return func(o *opOptions) { o.set(optGuarantee); o.guaranteed = true }
}

// WithChildren deletes the node's children first, recursively (Curator's
// deletingChildrenIfNeeded). Default: a node with children is
// zk.ErrNotEmpty. Delete.
func WithChildren() OpOption {
	return func(o *opOptions) { o.set(optChildren); o.children = true }
}

// WithIgnoreMissing makes a delete of a node that does not exist succeed
// (Curator's quietly). Default: zk.ErrNoNode. Delete.
func WithIgnoreMissing() OpOption {
	return func(o *opOptions) { o.set(optIgnoreMissing); o.ignoreMissing = true }
}

// WithSendOnce sends the request at most once: after a connection loss
// or an operation timeout, whose outcome is unknown, it is not sent
// again, and the error (wrapping curator.ErrConnectionLoss) comes back at
// once, for the caller to find out by a read whether it took effect. A
// conditional write (WithVersion) retried after its reply was lost fails
// with zk.ErrBadVersion, its own earlier success looking like another
// writer's: what an exactly-once counter must tell apart (recipes/atomic).
// Attempts never sent (no connection yet) and those the server refused
// (session expired or moved) are still retried. Default: off. Set.
func WithSendOnce() OpOption {
	return func(o *opOptions) { o.set(optSendOnce); o.sendOnce = true }
}
