package nodes

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/recipes/cache"
)

// MemberEventType is the kind of a MemberEvent.
type MemberEventType int

const (
	// MemberJoined: a member's node is new to the consumer.
	MemberJoined MemberEventType = iota + 1
	// MemberChanged: a member's payload changed.
	MemberChanged
	// MemberLeft: a member's node is gone.
	MemberLeft
)

func (t MemberEventType) String() string {
	switch t {
	case MemberJoined:
		return "joined"
	case MemberChanged:
		return "changed"
	case MemberLeft:
		return "left"
	}
	return fmt.Sprintf("MemberEventType(%d)", int(t))
}

// MemberEvent is a change of a group's membership, as a GroupMember's
// cache sees it.
type MemberEvent struct {
	Type MemberEventType
	ID   string
	Data []byte // the member's payload: the new one (joined, changed), the last known (left)
}

// GroupMember is Curator's GroupMember: a member of a group, and a view of
// the whole group. The member is an ephemeral node, membershipPath/<id>,
// kept by a PersistentNode (no protection: the id names the node; its
// parents made as containers) with the member's payload; the group is a
// cache of membershipPath's children (cache.Cache, WithMaxDepth(1)):
// Members, AddListener and Events tell who is in and of every change.
//
// An id names one live member: a member whose id another live session
// already holds (another process, or this process's previous session
// not yet expired by the server after a crash and a quick restart) is
// refused by Start, with an error wrapping curator.ErrLocked. Curator's
// two members with one id share the node and flap (the first to close
// deletes it, the other makes it again); here the node of the other is
// never adopted nor deleted. Found later (the member's session was lost
// and another took the id meanwhile), it is reported by Err and the
// member waits for the id to be free.
//
// All methods are safe for concurrent use.
type GroupMember struct {
	path, id string
	node     *PersistentNode
	cache    *cache.Cache

	mu      sync.Mutex
	started bool
	closed  bool
	events  chan MemberEvent
	quit    chan struct{} // closed by Close: ends the Events forwarder
	wg      sync.WaitGroup
}

// NewGroupMember returns a member id of the group at membershipPath, with
// payload (copied; nil: the client's default data, this host's address
// unless framework.WithDefaultData, as Curator), not started. id must name
// a node: not empty, no "/". Option: WithoutParentCreation. Errors wrap
// curator.ErrInvalidArgument.
func NewGroupMember(client *framework.Client, membershipPath, id string, payload []byte, opts ...Option) (*GroupMember, error) {
	if err := recipe.CheckArgs(client, "group", membershipPath); err != nil {
		return nil, err
	}
	if err := framework.ValidateName(id); err != nil {
		return nil, fmt.Errorf("group member id: %w", err)
	}
	o := options{parents: true}
	if err := o.apply("GroupMember", memberOpts, opts); err != nil {
		return nil, err
	}
	if payload == nil {
		payload = client.DefaultData()
	}
	var nodeOpts []Option
	if !o.parents {
		nodeOpts = append(nodeOpts, WithoutParentCreation())
	}
	node, err := NewPersistentNode(client, framework.JoinPath(membershipPath, id), payload, nodeOpts...)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(client, membershipPath, cache.WithMaxDepth(1))
	if err != nil {
		return nil, err
	}
	return &GroupMember{path: membershipPath, id: id, node: node, cache: c, quit: make(chan struct{})}, nil
}

// Start joins the group (Curator's start): it makes the member's node and
// loads the group, and returns once both are done, or ctx ends (its
// error: the member goes on joining; Close stops it). An id held by
// another live session is an error wrapping curator.ErrLocked, and the
// member is closed (make another to try again). Starting twice is
// curator.ErrBusy, after Close curator.ErrClosed.
func (g *GroupMember) Start(ctx context.Context) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	g.mu.Lock()
	switch {
	case g.closed:
		g.mu.Unlock()
		return fmt.Errorf("group member %s: %w", g.id, curator.ErrClosed)
	case g.started:
		g.mu.Unlock()
		return fmt.Errorf("group member %s: %w: already started", g.id, curator.ErrBusy)
	}
	g.started = true
	g.mu.Unlock()
	if err := g.node.Start(); err != nil {
		return err
	}
	err := g.node.waitMade(ctx, func(err error) bool { return errors.Is(err, curator.ErrLocked) })
	if errors.Is(err, curator.ErrLocked) {
		g.Close()
		return fmt.Errorf("group member %s of %s: the id is taken: %w", g.id, g.path, err)
	}
	// Loaded even if ctx ended: the cache goes on loading (see cache.Start).
	return errors.Join(err, g.cache.Start(ctx))
}

// ID returns the member's id.
func (g *GroupMember) ID() string { return g.id }

// SetData sets the member's payload (Curator's setThisData; see
// PersistentNode.SetData): it returns once the node holds it, or ctx ends;
// before Start it only keeps it (Curator throws).
func (g *GroupMember) SetData(ctx context.Context, data []byte) error {
	return g.node.SetData(ctx, data)
}

// Members returns the group's members, id to payload (Curator's
// getCurrentMembers), as cached: always this member with its payload as
// set here, even before its node is made, as Curator.
func (g *GroupMember) Members() map[string][]byte {
	m := map[string][]byte{}
	for p, n := range g.cache.Snapshot() {
		if p != g.path {
			m[framework.NodeName(p)] = n.Data
		}
	}
	m[g.id] = g.node.Data()
	return m
}

// Err returns the latest problem keeping the member's node (see
// PersistentNode.Err): once joined, one wrapping curator.ErrLocked says
// that another session took the id while this member's session was lost.
// Nil while the node is there.
func (g *GroupMember) Err() error { return g.node.Err() }

// AddListener adds fn, called for every change of the group from now on
// (this member's own joining included) on the cache's delivery goroutine
// (see cache.Cache: in order, coalesced while a consumer lags); remove
// removes it. Added before Start, it is told of every member found by the
// first load, as joined. Not to call Close from.
func (g *GroupMember) AddListener(fn func(MemberEvent)) (remove func()) {
	return g.cache.AddListener(func(ev cache.Event) {
		if me, ok := g.memberEvent(ev); ok {
			fn(me)
		}
	})
}

// Events returns a channel of every change of the group from its first
// call on (as AddListener), closed by Close. Read it: while it is not
// read, changes coalesce and listeners wait (see cache.Cache).
func (g *GroupMember) Events() <-chan MemberEvent {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.events != nil {
		return g.events
	}
	g.events = make(chan MemberEvent)
	if g.closed {
		close(g.events)
		return g.events
	}
	in := g.cache.Events()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer close(g.events)
		for ev := range in { // closed by the cache's Close
			if me, ok := g.memberEvent(ev); ok {
				select {
				case g.events <- me:
				case <-g.quit:
					return
				}
			}
		}
	}()
	return g.events
}

// memberEvent is the member event of a cache event, if it is one (not
// the group node's own, nor the cache's Initialized and Rebuilt).
func (g *GroupMember) memberEvent(ev cache.Event) (MemberEvent, bool) {
	if ev.Path == "" || ev.Path == g.path {
		return MemberEvent{}, false
	}
	id := framework.NodeName(ev.Path)
	switch ev.Type {
	case cache.EventCreated:
		return MemberEvent{MemberJoined, id, ev.New.Data}, true
	case cache.EventChanged:
		return MemberEvent{MemberChanged, id, ev.New.Data}, true
	case cache.EventDeleted:
		return MemberEvent{MemberLeft, id, ev.Old.Data}, true
	}
	return MemberEvent{}, false
}

// Close leaves the group (Curator's close): it stops the cache, then
// deletes the member's node (see PersistentNode.Close); the Events
// channel is closed, and nothing of the member runs once it returns.
// Closing twice is a no-op. Not from a listener.
func (g *GroupMember) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	close(g.quit)
	g.mu.Unlock()
	err := g.cache.Close()
	g.wg.Wait()
	return errors.Join(err, g.node.Close())
}
