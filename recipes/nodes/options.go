package nodes

import (
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Option configures a PersistentNode, a PersistentTTLNode or a
// GroupMember. Each constructor takes the options that apply to it (listed
// with each option) and refuses the others with an error wrapping
// curator.ErrInvalidArgument.
type Option func(*options)

type options struct {
	recipe.Options // its Fail and Apply (Data and the rest unused)
	given          optionKind
	mode           framework.CreateMode
	protected      bool
	parents        bool
	ttl            time.Duration
	keep           bool
	child          string
	factor         int
}

// optionKind is one option, as a bit, so that a constructor can tell the
// options it takes from the others.
type optionKind uint8

const (
	optMode optionKind = 1 << iota
	optProtection
	optTTL
	optKeep
	optParents
	optChild
	optFactor
)

var optionNames = []string{"WithMode", "WithProtection", "WithTTL", "WithKeepOnClose",
	"WithoutParentCreation", "WithChildName", "WithTouchFactor"}

// The options each constructor takes.
const (
	persistentOpts = optMode | optProtection | optTTL | optKeep | optParents
	ttlNodeOpts    = optParents | optChild | optFactor
	memberOpts     = optParents
)

// apply applies opts to o, refusing those not in allowed (what names the
// recipe in the error).
func (o *options) apply(what string, allowed optionKind, opts []Option) error {
	if err := recipe.Apply(o, opts); err != nil {
		return err
	}
	if err := recipe.NotFor(what, uint64(o.given), uint64(allowed), optionNames); err != nil {
		return err
	}
	return nil
}

// maxTTL is the longest TTL ZooKeeper takes: it keeps a TTL in 40 bits of
// milliseconds (EphemeralType.MAX_TTL, about 34.8 years).
const maxTTL = 0xFF_FFFFFFFF * time.Millisecond

// checkTTL refuses a TTL ZooKeeper would refuse (it counts whole
// milliseconds, at least one).
func (o *options) checkTTL(d time.Duration) {
	if d < time.Millisecond || d > maxTTL {
		o.Fail("TTL %v (from 1ms to %v)", d, maxTTL)
	}
}

// WithMode sets the node's mode (Curator's CreateMode): ephemeral (the
// default), persistent, container, TTL, or a sequential one (always
// protected). PersistentNode.
func WithMode(m framework.CreateMode) Option {
	return func(o *options) {
		o.given |= optMode
		if m < framework.ModePersistent || m > framework.ModePersistentSequentialTTL {
			o.Fail("unknown mode %d", m)
		}
		o.mode = m
	}
}

// WithProtection makes the node's name protected (Curator's
// useProtection: "_c_<uuid>-" before it), so a create whose reply was lost
// is found again. Sequential modes always are. PersistentNode.
func WithProtection() Option {
	return func(o *options) { o.given |= optProtection; o.protected = true }
}

// WithTTL sets the TTL of a TTL mode (ModePersistentTTL,
// ModePersistentSequentialTTL), from 1ms to about 34.8 years (ZooKeeper's
// limit); the server must run with zookeeper.extendedTypesEnabled=true
// (else ErrTTLUnsupported). PersistentNode; a PersistentTTLNode takes its
// TTL as an argument.
func WithTTL(d time.Duration) Option {
	return func(o *options) {
		o.given |= optTTL
		o.checkTTL(d)
		o.ttl = d
	}
}

// WithoutParentCreation makes a create fail while the node's parent is
// missing, instead of making the parents as containers (Curator's
// useParentCreation false); the node is tried again until the parent is
// there. PersistentNode, PersistentTTLNode, GroupMember.
func WithoutParentCreation() Option {
	return func(o *options) { o.given |= optParents; o.parents = false }
}

// WithKeepOnClose leaves the node in place at Close (Curator always
// deletes it; its PersistentTtlNode lets it expire instead, as
// PersistentTTLNode does). PersistentNode.
func WithKeepOnClose() Option {
	return func(o *options) { o.given |= optKeep; o.keep = true }
}

// WithChildName names the child a PersistentTTLNode touches (Curator's
// childNodeName; default "touch"): a node name, no "/". PersistentTTLNode.
func WithChildName(name string) Option {
	return func(o *options) {
		o.given |= optChild
		if err := framework.ValidateName(name); err != nil {
			o.Fail("child name: %v", err)
		}
		o.child = name
	}
}

// WithTouchFactor sets how many times per TTL a PersistentTTLNode touches
// its child (Curator's touchScheduleFactor; default 2: every TTL/2). At
// least 2: touched only once per TTL, the child could expire between two
// touches. PersistentTTLNode.
func WithTouchFactor(f int) Option {
	return func(o *options) {
		o.given |= optFactor
		if f < 2 {
			o.Fail("touch factor %d (at least 2)", f)
		}
		o.factor = f
	}
}
