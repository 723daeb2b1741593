package inspect

import (
	"encoding/binary"
	"slices"
	"strings"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
)

// Recognize lists the recipes in the tree rooted at root, in tree order
// (a node's recipes, then its children's by name), each with its entries
// as of now, and the nodes that could not be read. It does no I/O.
func Recognize(root *Znode, now time.Time) ([]Recipe, []Problem) {
	r := recognizer{now: now}
	r.node(root)
	return r.recipes, r.problems
}

type recognizer struct {
	now      time.Time
	recipes  []Recipe
	problems []Problem
}

func (r *recognizer) add(rec Recipe) {
	rec.Label = rec.Kind.Label()
	if rec.Holders == nil {
		rec.Holders = []Entry{}
	}
	if rec.Waiters == nil {
		rec.Waiters = []Entry{}
	}
	r.recipes = append(r.recipes, rec)
}

func (r *recognizer) node(z *Znode) {
	if z.Err != nil {
		r.problems = append(r.problems, Problem{Path: z.Path, Error: z.Err.Error()})
		return
	}
	if z.Unread {
		return
	}
	if len(z.Children) == 0 {
		r.leaf(z)
		return
	}
	if r.service(z) || r.semaphore(z) || r.group(z) || r.queue(z) {
		return
	}
	groups := map[family][]*Znode{}
	var ready *Znode
	var others []*Znode
	for _, c := range z.Children {
		// A persistent child named like a contender (an application's
		// record keyed by a UUID, say) is walked into like any other node.
		switch n := parseName(c.Name); {
		case n.fam != famNone && !c.persistent():
			groups[n.fam] = append(groups[n.fam], c)
		case c.Name == layout.ReadyNode:
			ready = c
		default:
			others = append(others, c)
		}
	}
	if g := groups[famMutex]; len(g) > 0 {
		q := lockQueue(z.Path, g, r.now)
		rec := Recipe{Path: z.Path, Kind: KindMutex, Holders: q.Holders, Waiters: q.Waiters}
		if z.Name == layout.LocksChild {
			rec.Notes = append(rec.Notes, "named \""+layout.LocksChild+"\": it may be the internal lock of a semaphore at "+framework.ParentPath(z.Path))
		}
		r.add(rec)
	}
	if g := groups[famReadWrite]; len(g) > 0 {
		r.add(readWrite(z.Path, g, r.now))
	}
	if g := groups[famLatch]; len(g) > 0 {
		q := lockQueue(z.Path, g, r.now)
		r.add(Recipe{Path: z.Path, Kind: KindLeaderLatch, Holders: q.Holders, Waiters: q.Waiters,
			Notes: []string{"the holder is the leader; node data is the participant id"}})
	}
	if g := groups[famLease]; len(g) > 0 {
		rec := Recipe{Path: z.Path, Kind: KindSemaphore, Leases: leases(g, nil, r.now),
			Notes: []string{"the leases of a semaphore whose internal lock (its sibling \"" + layout.LocksChild + "\") is outside the path inspected; the maximum is not stored in ZooKeeper"}}
		r.add(rec)
	}
	switch {
	case len(groups[famMember]) > 0 || ready != nil && len(groups) == 0:
		r.add(doubleBarrier(z.Path, groups[famMember], ready, r.now))
	case ready != nil:
		others = append(others, ready)
		slices.SortFunc(others, func(a, b *Znode) int { return strings.Compare(a.Name, b.Name) })
	}
	// Ephemeral or protected leaves of no known layout: someone's recipe,
	// but not one we know.
	var strays, rest []*Znode
	for _, c := range others {
		if c.Err == nil && !c.Unread && len(c.Children) == 0 && (c.ephemeral() || framework.IsProtected(c.Name)) {
			strays = append(strays, c)
		} else {
			rest = append(rest, c)
		}
	}
	if len(strays) > 0 {
		rec := Recipe{Path: z.Path, Kind: KindUnknown,
			Notes: []string{"children of no layout known here (ephemeral or protected)"}}
		for i, c := range strays {
			rec.Children = append(rec.Children, newEntry(c, RoleChild, i+1, r.now))
		}
		r.add(rec)
	}
	for _, c := range rest {
		r.node(c)
	}
}

// group recognises Curator's GroupMember layout (and gocurator's): a
// membership path whose children are each a member's PersistentNode,
// named by its member id, EPHEMERAL (not sequential, not protected), its
// data the member's payload. The rule is that every child is such a node:
// ephemeral, childless, its name neither protected nor ending in a
// sequence suffix, nor any contender's, lease's or barrier member's (those
// are other recipes, and a group's path holds nothing else). A parent of
// ephemeral registrations of another kind (Kafka's /brokers/ids) looks the
// same, and is one in effect: members listed by id.
func (r *recognizer) group(z *Znode) bool {
	for _, c := range z.Children {
		if c.Err != nil || c.Unread || !c.ephemeral() || len(c.Children) > 0 || c.Name == layout.ReadyNode ||
			framework.IsProtected(c.Name) || parseName(c.Name).fam != famNone || sequential(c.Name) {
			return false
		}
	}
	rec := Recipe{Path: z.Path, Kind: KindGroup,
		Notes: []string{"each member is an ephemeral node named by its id, held by its session; its data is the member's payload"}}
	for i, c := range z.Children { // by name: the member ids
		rec.Members = append(rec.Members, newEntry(c, RoleMember, i+1, r.now))
	}
	r.add(rec)
	return true
}

// sequential reports whether a name ends in a ZooKeeper sequence suffix.
func sequential(name string) bool {
	return len(name) >= layout.SeqLen && isSequence(name[len(name)-layout.SeqLen:])
}

// leaf: a shared count (a persistent node of 4 bytes: or a
// DistributedAtomicInteger, the same bytes), an atomic long (8 bytes), or
// a barrier or plain node.
func (r *recognizer) leaf(z *Znode) {
	e := newEntry(z, RoleNode, 1, r.now)
	if !z.ephemeral() && len(z.Data) == layout.SharedCountLen {
		n := int32(binary.BigEndian.Uint32(z.Data))
		r.add(Recipe{Path: z.Path, Kind: KindSharedCount, Count: &n, Node: &e})
		return
	}
	if !z.ephemeral() && len(z.Data) == layout.AtomicLongLen {
		n := int64(binary.BigEndian.Uint64(z.Data))
		r.add(Recipe{Path: z.Path, Kind: KindAtomicLong, Long: &n, Node: &e})
		return
	}
	rec := Recipe{Path: z.Path, Kind: KindBarrier, Node: &e}
	if z.ephemeral() {
		rec.Notes = append(rec.Notes, "an ephemeral node of session "+e.Session)
	}
	r.add(rec)
}

// semaphore recognises InterProcessSemaphoreV2's layout: children "locks"
// (contenders "lock-" only) and "leases" (contenders "lease-" only), both
// persistent, and nothing else; with "leases", or with a non-empty "locks".
func (r *recognizer) semaphore(z *Znode) bool {
	locks, leasesNode := z.child(layout.LocksChild), z.child(layout.LeasesChild)
	n := 0
	for _, c := range []*Znode{locks, leasesNode} {
		if c != nil {
			n++
			if c.Err != nil || c.Unread || c.ephemeral() {
				return false
			}
		}
	}
	if n == 0 || n != len(z.Children) {
		return false
	}
	only := func(c *Znode, f family) bool {
		for _, k := range c.Children {
			if parseName(k.Name).fam != f {
				return false
			}
		}
		return true
	}
	if locks != nil && !only(locks, famMutex) || leasesNode != nil && !only(leasesNode, famLease) {
		return false
	}
	if leasesNode == nil && len(locks.Children) == 0 {
		return false
	}
	rec := Recipe{Path: z.Path, Kind: KindSemaphore,
		Notes: []string{"the maximum is not stored in ZooKeeper: leases are listed in order; only the internal lock's holder can be waiting for one"}}
	if locks != nil {
		q := lockQueue(locks.Path, locks.Children, r.now)
		rec.Lock = &q
	}
	if leasesNode != nil {
		rec.Leases = leases(leasesNode.Children, rec.Lock, r.now)
	}
	r.add(rec)
	return true
}

// leases lists lease nodes in order. An acquirer holds the internal lock
// while it makes its lease node and waits for the leases to number at most
// the maximum, so a lease of the lock holder's session made after its lock
// node is being acquired; any other lease is granted (unless the maximum
// was lowered since).
func leases(nodes []*Znode, lock *Queue, now time.Time) []Entry {
	var out []Entry
	for i, c := range sortBySequence(nodes) {
		e := newEntry(c, RoleLease, i+1, now)
		if lock != nil && len(lock.Holders) > 0 {
			h := lock.Holders[0]
			if e.SessionID != 0 && e.SessionID == h.SessionID && e.Token > h.Token {
				e.Notes = append(e.Notes, "being acquired (its session holds the internal lock)")
			} else {
				e.Notes = append(e.Notes, "granted")
			}
		} else if lock != nil {
			e.Notes = append(e.Notes, "granted")
		}
		out = append(out, e)
	}
	return out
}

// lockQueue is the standard lock's queue: ordered by sequence, the first
// holds (InterProcessMutex, LeaderLatch's leader).
func lockQueue(path string, nodes []*Znode, now time.Time) Queue {
	q := Queue{Path: path, Holders: []Entry{}, Waiters: []Entry{}}
	for i, c := range sortBySequence(nodes) {
		if i == 0 {
			q.Holders = append(q.Holders, newEntry(c, RoleHolder, 1, now))
		} else {
			q.Waiters = append(q.Waiters, newEntry(c, RoleWaiter, i, now))
		}
	}
	return q
}

// readWrite classifies a read-write lock's one queue: a writer holds when
// no node has a lower sequence; a reader holds when no writer has. A read
// node made to downgrade a write holding (Curator since CURATOR-621, and
// gocurator) reuses its writer's sequence, so it sorts with its writer and
// holds with it.
func readWrite(path string, nodes []*Znode, now time.Time) Recipe {
	sorted := sortBySequence(nodes)
	first := parseName(sorted[0].Name).seq
	firstWriter := ""
	for _, c := range sorted {
		if n := parseName(c.Name); n.mode == "write" {
			firstWriter = n.seq
			break
		}
	}
	rec := Recipe{Path: path, Kind: KindReadWrite}
	writers := map[int64]bool{} // sessions of holding writers
	for _, c := range sorted {
		n := parseName(c.Name)
		held := n.seq == first
		if n.mode == "read" {
			held = firstWriter == "" || n.seq <= firstWriter
		}
		if held {
			e := newEntry(c, RoleHolder, len(rec.Holders)+1, now)
			if n.mode == "write" && e.SessionID != 0 {
				writers[e.SessionID] = true
			}
			rec.Holders = append(rec.Holders, e)
			continue
		}
		e := newEntry(c, RoleWaiter, len(rec.Waiters)+1, now)
		if n.mode == "read" && writers[e.SessionID] {
			e.Notes = append(e.Notes, "same session as the holding writer: a Curator read lock taken by the writer's thread holds although queued behind it")
		}
		rec.Waiters = append(rec.Waiters, e)
	}
	return rec
}

// doubleBarrier lists members oldest first, and whether "ready" exists.
func doubleBarrier(path string, members []*Znode, ready *Znode, now time.Time) Recipe {
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b *Znode) int {
		if a.Stat != nil && b.Stat != nil && a.Stat.Czxid != b.Stat.Czxid {
			if a.Stat.Czxid < b.Stat.Czxid {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	isReady := ready != nil
	rec := Recipe{Path: path, Kind: KindDoubleBarrier, Ready: &isReady}
	for i, c := range sorted {
		rec.Members = append(rec.Members, newEntry(c, RoleMember, i+1, now))
	}
	if isReady {
		rec.Notes = append(rec.Notes, "\""+layout.ReadyNode+"\" exists: enough members entered")
	} else {
		rec.Notes = append(rec.Notes, "no \""+layout.ReadyNode+"\" yet: members wait for enough others to enter")
	}
	return rec
}

// sortBySequence orders contenders as Curator and gocurator do: by the
// sequence suffix alone (compared as text), ties broken by name.
func sortBySequence(nodes []*Znode) []*Znode {
	out := slices.Clone(nodes)
	slices.SortFunc(out, func(a, b *Znode) int {
		if c := strings.Compare(parseName(a.Name).seq, parseName(b.Name).seq); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
