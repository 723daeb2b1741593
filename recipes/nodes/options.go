package nodes

import (
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Option configures a PersistentNode.
type Option func(*options)

type options struct {
	recipe.Options // its Fail and Apply (Data and the rest unused)
	mode           framework.CreateMode
	protected      bool
	parents        bool
	ttl            time.Duration
	keep           bool
}

// WithMode sets the node's mode (Curator's CreateMode): ephemeral (the
// default), persistent, container, TTL, or a sequential one (always
// protected).
func WithMode(m framework.CreateMode) Option {
	return func(o *options) {
		if m < framework.ModePersistent || m > framework.ModePersistentSequentialTTL {
			o.Fail("unknown mode %d", m)
		}
		o.mode = m
	}
}

// WithProtection makes the node's name protected (Curator's
// useProtection: "_c_<uuid>-" before it), so a create whose reply was lost
// is found again. Sequential modes always are.
func WithProtection() Option { return func(o *options) { o.protected = true } }

// WithTTL sets the TTL of a TTL mode (ModePersistentTTL,
// ModePersistentSequentialTTL); the server must run with
// zookeeper.extendedTypesEnabled=true.
func WithTTL(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.Fail("TTL %v", d)
		}
		o.ttl = d
	}
}

// WithoutParentCreation makes a create fail while the node's parent is
// missing, instead of making the parents as containers (Curator's
// useParentCreation false); the node is tried again until the parent is
// there.
func WithoutParentCreation() Option { return func(o *options) { o.parents = false } }

// WithKeepOnClose leaves the node in place at Close (Curator always
// deletes it; its PersistentTtlNode lets it expire instead).
func WithKeepOnClose() Option { return func(o *options) { o.keep = true } }
