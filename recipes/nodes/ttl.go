package nodes

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
)

// Defaults of a PersistentTTLNode (Curator's DEFAULT_CHILD_NODE_NAME and
// DEFAULT_TOUCH_SCHEDULE_FACTOR).
const (
	DefaultChildName   = "touch"
	DefaultTouchFactor = 2
)

// PersistentTTLNode is Curator's PersistentTtlNode: a node that goes by
// itself some time after its owner stops, without waking the node's
// watchers while the owner lives. The node at path is kept by a
// PersistentNode as a TTL node (ModePersistentTTL, with the TTL given);
// a child of it, "touch" (WithChildName), also a TTL node with that TTL,
// is touched (its data written: the client's default data) every
// TTL/2 (WithTouchFactor). ZooKeeper deletes a TTL node once it has no
// children and has not changed for its TTL: while the owner touches,
// the child never expires and the node, which has a child, neither;
// once the owner stops (Close, a crash, a lost network), the child
// expires after the TTL and the node after it, each within one of the
// server's expiry checks (znode.container.checkIntervalMs, 60 s by
// default). A touch changes the child only: watchers of the node get no
// event from it.
//
// The server must run with zookeeper.extendedTypesEnabled=true; one that
// does not refuses the node, and WaitForInitialCreate returns an error
// wrapping ErrTTLUnsupported.
//
// Differences from Curator, on purpose: the node is a TTL node, as in
// Curator 5.9 (apache/curator#1260), where Curator 5.4 to 5.8 made it a
// container, which the server never deletes if it never had a child: an
// owner dead before its first touch left it forever (CURATOR-545,
// apache/curator#1258). And the child is touched as soon as the node is
// made, then every TTL/2, where Curator touches first after TTL/2 only.
// As in Curator, Close stops touching and leaves both nodes to expire.
// All methods are safe for concurrent use.
type PersistentTTLNode struct {
	client *framework.Client
	node   *PersistentNode
	child  string
	ttl    time.Duration
	every  time.Duration

	mu      sync.Mutex
	started bool
	closed  bool
	stop    context.CancelFunc
	done    chan struct{} // closed when the touch loop ends
}

// NewPersistentTTLNode returns a PersistentTTLNode for path, not started:
// a node with data (copied; nil: empty) and ttl (from 1ms to about 34.8
// years, ZooKeeper's limit), its parents made as containers unless
// WithoutParentCreation. Options: WithChildName, WithTouchFactor,
// WithoutParentCreation. Errors wrap curator.ErrInvalidArgument.
func NewPersistentTTLNode(client *framework.Client, path string, ttl time.Duration, data []byte, opts ...Option) (*PersistentTTLNode, error) {
	if err := recipe.CheckArgs(client, "node", path); err != nil {
		return nil, err
	}
	o := options{parents: true, child: DefaultChildName, factor: DefaultTouchFactor}
	o.checkTTL(ttl)
	if err := o.apply("PersistentTTLNode", ttlNodeOpts, opts); err != nil {
		return nil, err
	}
	nodeOpts := []Option{WithMode(framework.ModePersistentTTL), WithTTL(ttl), WithKeepOnClose()}
	if !o.parents {
		nodeOpts = append(nodeOpts, WithoutParentCreation())
	}
	node, err := NewPersistentNode(client, path, data, nodeOpts...)
	if err != nil {
		return nil, err
	}
	return &PersistentTTLNode{client: client, node: node, child: framework.JoinPath(path, o.child),
		ttl: ttl, every: ttl / time.Duration(o.factor)}, nil
}

// Start starts keeping the node and touching its child (Curator's start):
// it returns at once; WaitForInitialCreate waits for the node. Starting
// twice is curator.ErrBusy, after Close curator.ErrClosed.
func (t *PersistentTTLNode) Start() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.node.Start(); err != nil {
		return err
	}
	t.started = true
	ctx, stop := context.WithCancel(context.Background())
	t.stop, t.done = stop, make(chan struct{})
	go t.touchLoop(ctx)
	return nil
}

// WaitForInitialCreate waits until the node has been made once (see
// PersistentNode.WaitForInitialCreate): a server that refuses TTL nodes
// ends the wait at once with an error wrapping ErrTTLUnsupported.
func (t *PersistentTTLNode) WaitForInitialCreate(ctx context.Context) error {
	return t.node.WaitForInitialCreate(ctx)
}

// Path returns the node's path once made ("" before).
func (t *PersistentTTLNode) Path() string { return t.node.Path() }

// ChildPath returns the path of the child it touches.
func (t *PersistentTTLNode) ChildPath() string { return t.child }

// Data returns a copy of the node's data as last set here.
func (t *PersistentTTLNode) Data() []byte { return t.node.Data() }

// SetData sets the node's data (see PersistentNode.SetData). A change of
// the node counts as one for its TTL too.
func (t *PersistentTTLNode) SetData(ctx context.Context, data []byte) error {
	return t.node.SetData(ctx, data)
}

// Err returns the latest problem keeping the node (see PersistentNode.Err).
func (t *PersistentTTLNode) Err() error { return t.node.Err() }

// Close stops touching the child and keeping the node, and leaves both to
// expire (as Curator's PersistentTtlNode, whose close deletes nothing):
// the child after the TTL, then the node. A touch in flight is let go: it
// can only make the child fresh once more. Closing twice is a no-op.
func (t *PersistentTTLNode) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	stop, done := t.stop, t.done
	t.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	return t.node.Close()
}

// touchLoop touches the child once the node is made, at once, then every
// t.every until ctx ends.
func (t *PersistentTTLNode) touchLoop(ctx context.Context) {
	defer close(t.done)
	never := func(error) bool { return false }
	if err := t.node.waitMade(ctx, never); err != nil {
		return // closed before the node was made
	}
	tick := time.NewTicker(t.every)
	defer tick.Stop()
	for {
		t.touch(ctx)
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// touch writes the child, making it if it is missing (Curator's touch:
// setData, else create): either way its mtime is now. A missing node
// (deleted, or expired while the client was cut off) is the
// PersistentNode's to make again; the next touch makes the child under it.
func (t *PersistentTTLNode) touch(ctx context.Context) {
	data := t.client.DefaultData()
	_, err := t.client.Set(ctx, t.child, data)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = t.client.Create(ctx, t.child, data, framework.WithMode(framework.ModePersistentTTL), framework.WithTTL(t.ttl))
		if errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrNoNode) {
			err = nil // made meanwhile (fresh too), or the node is missing
		}
	}
	if err != nil && ctx.Err() == nil && !errors.Is(err, curator.ErrClosed) {
		t.client.Logger().Debug("persistent TTL node: touch", "path", t.child, "err", err)
	}
}
