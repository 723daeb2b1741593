package inspect

import "time"

// Kind is what a recipe was recognised as.
type Kind string

// The kinds of recipe, as they appear in JSON.
const (
	KindMutex         Kind = "mutex"
	KindReadWrite     Kind = "rwlock"
	KindSemaphore     Kind = "semaphore"
	KindLeaderLatch   Kind = "leader-latch"
	KindDoubleBarrier Kind = "double-barrier"
	KindSharedCount   Kind = "shared-count"
	KindAtomicLong    Kind = "atomic-long"
	KindGroup         Kind = "group"
	KindService       Kind = "service"
	KindQueue         Kind = "queue"
	KindQueueClaims   Kind = "queue-claims"
	KindBarrier       Kind = "barrier-or-plain-node"
	KindUnknown       Kind = "unknown"
)

// Label is the kind as an operator reads it.
func (k Kind) Label() string {
	switch k {
	case KindMutex:
		return "mutex (or LeaderSelector)"
	case KindReadWrite:
		return "read-write lock"
	case KindSemaphore:
		return "semaphore"
	case KindLeaderLatch:
		return "leader latch"
	case KindDoubleBarrier:
		return "double barrier"
	case KindSharedCount:
		return "shared count (or DistributedAtomicInteger)"
	case KindAtomicLong:
		return "atomic long (DistributedAtomicLong)"
	case KindGroup:
		return "group (GroupMember)"
	case KindService:
		return "service (curator-x-discovery)"
	case KindQueue:
		return "queue (DistributedQueue family, SimpleDistributedQueue)"
	case KindQueueClaims:
		return "queue lock path (DistributedQueue items being consumed)"
	case KindBarrier:
		return "barrier or plain node"
	}
	return "unknown"
}

// Roles of an Entry.
const (
	RoleHolder   = "holder"   // holds the lock (a latch's leader)
	RoleWaiter   = "waiter"   // queued behind the holders
	RoleLease    = "lease"    // a semaphore's lease node, granted or waiting
	RoleMember   = "member"   // a double barrier's or a group's member
	RoleNode     = "node"     // the recipe's own node (barrier, shared count)
	RoleChild    = "child"    // a child of an unknown recipe
	RoleInstance = "instance" // a service's instance (curator-x-discovery)
	RoleItem     = "item"     // a queue's item node
	RoleClaim    = "claim"    // an item being consumed (a queue's lock path)
)

// Entry is one node of a recipe: a contender, a lease, a member, or the
// recipe's own node.
type Entry struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Role string `json:"role"`
	// Position is the 1-based place in the list the entry is in (holders,
	// waiters in queue order, leases in order, members by age).
	Position int `json:"position"`
	// Mode is "read" or "write" in a read-write lock.
	Mode string `json:"mode,omitempty"`
	// Sequence is the sequence suffix, for contenders and leases.
	Sequence    string `json:"sequence,omitempty"`
	ProtectedID string `json:"protected_id,omitempty"`
	// Session is the owning session (the node's ephemeralOwner) in hex;
	// "0x0" for a persistent node.
	Session   string        `json:"session"`
	SessionID int64         `json:"-"`
	Ctime     time.Time     `json:"ctime"`
	Age       time.Duration `json:"-"`
	AgeMillis int64         `json:"age_ms"`
	// Data is the node's data: as text when it is printable UTF-8
	// (DataEncoding "text"), else in hex (DataEncoding "hex").
	Data         string `json:"data"`
	DataEncoding string `json:"data_encoding"`
	// DataSize is the data's length in bytes.
	DataSize int `json:"data_size"`
	// Token is the node's creation zxid (czxid): the fencing token a holder
	// of this node gets; TokenHex is the same in hex.
	Token    int64    `json:"token"`
	TokenHex string   `json:"token_hex"`
	Notes    []string `json:"notes,omitempty"`
}

// Queue is a lock's holders and waiters, in queue order.
type Queue struct {
	Path    string  `json:"path"`
	Holders []Entry `json:"holders"`
	Waiters []Entry `json:"waiters"`
}

// Recipe is one recipe found in ZooKeeper.
type Recipe struct {
	Path  string `json:"path"`
	Kind  Kind   `json:"kind"`
	Label string `json:"label"`
	// Holders and Waiters, in queue order, for the lock kinds (mutex,
	// read-write lock, leader latch); empty for the others.
	Holders []Entry `json:"holders"`
	Waiters []Entry `json:"waiters"`
	// Leases of a semaphore, by sequence (which ones are granted is not
	// in ZooKeeper, nor is the maximum: a lease is granted when the count
	// fits as its holder saw it, so not always the first ones; each
	// entry's notes say what can be told), and its internal lock.
	Leases []Entry `json:"leases,omitempty"`
	Lock   *Queue  `json:"lock,omitempty"`
	// Members of a double barrier (oldest first) and whether "ready"
	// exists; members of a group, by member id (the node's name).
	Members []Entry `json:"members,omitempty"`
	Ready   *bool   `json:"ready,omitempty"`
	// Count of a shared count.
	Count *int32 `json:"count,omitempty"`
	// Long is the value of an atomic long.
	Long *int64 `json:"long,omitempty"`
	// Node is the recipe's own node, for a barrier or plain node, a
	// shared count and an atomic long.
	Node *Entry `json:"node,omitempty"`
	// Instances of a service (curator-x-discovery), by node name.
	Instances []Instance `json:"instances,omitempty"`
	// Items of a queue (or claims of its lock path), in the order they
	// were put; Depth is how many item nodes there are, Oldest the age of
	// the first (a node made by PutMulti holds several items).
	Items        []Entry       `json:"items,omitempty"`
	Depth        *int          `json:"depth,omitempty"`
	Oldest       time.Duration `json:"-"`
	OldestMillis *int64        `json:"oldest_age_ms,omitempty"`
	// Children of an unknown recipe, by name.
	Children []Entry  `json:"children,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// Problem is a node that could not be read (permission denied).
type Problem struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Snapshot is every recipe under a path at one moment.
type Snapshot struct {
	Path string    `json:"path"`
	Time time.Time `json:"time"`
	// Missing: the path does not exist (only in --watch, after it vanished).
	Missing    bool      `json:"missing,omitempty"`
	Recipes    []Recipe  `json:"recipes"`
	Unreadable []Problem `json:"unreadable,omitempty"`
	// Truncated: the walk stopped at its node limit; recipes beyond it are
	// not listed.
	Truncated bool `json:"truncated,omitempty"`
}
