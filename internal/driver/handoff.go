package driver

import (
	"cmp"
	"reflect"
	"slices"
	"sync"

	"github.com/gocurator/curator/framework"
)

// The handoff: a mutex waiter whose predecessor goes may hold at once,
// without reading the queue again, when it can prove that no contender
// lower than itself is left. The proof:
//
//  1. Sequence numbers only grow: once our node exists, no node with a
//     lower sequence can ever be made on the path. (The server assigns
//     them in creation order, and every contender of a plain mutex, ours
//     or Curator's, is made ephemeral-sequential: none is ever made with a
//     chosen sequence. The read-write lock's downgrade does make one, a
//     read node in its writer's place, CURATOR-621: so the handoff is off
//     for any driver but the plain "first holds" one of a single contender
//     name; see handoffSafe.)
//  2. So the contenders lower than ours now are among those of our last
//     reading of the queue, which was sent after our node was made (a
//     shared read is never older than its call).
//  3. A contender is known gone only as a node of one incarnation of
//     the lock path. A reading is a getChildren whose reply carries the
//     path's stat, so it names the path's incarnation, its czxid
//     (Queue.czxid). Within one incarnation a sequential name is made
//     once: the sequence comes from the parent's counter, which only
//     grows, and every contender is made sequential (1.). So the pair
//     (czxid, name) names one node, and a node deleted never comes back.
//     Names do recur across incarnations: the path, a container, is
//     reaped at the server's next container check once empty (anywhere
//     from 0 to znode.container.checkIntervalMs after it empties) and
//     made again with its counter back at 0, and a protected create
//     retried after its first node went with its session keeps its UUID
//     (Curator's and ours: CURATOR-498), as a foreign client's may, so
//     "_c_U-lock-0000000000" can name two nodes in turn. Every record of a
//     going is therefore made under the incarnation of the reading that
//     listed the name (the waiter's watch on pred or the contender before
//     it, NodeDeleted or a getData that found no node: set after that
//     reading's reply on its session, so it tells that the node listed
//     was deleted after it was read; our own delete that succeeded, under
//     the incarnation of the last reading that listed our node), and
//     counts only for a reading of the same incarnation: a fact about
//     one node, true whenever it is asked, with no clock. Records are kept
//     per client and path, while anyone of that client waits or creates
//     there (the newest only: one not kept reads the queue), never shared
//     between the sessions of a process: sound now that a record names
//     one node, the sharing bought nothing where services run (K processes
//     of one session each: issue 38, 2.; docs/performance.md), and a
//     record is then always of the session whose readings it counts for.
//     Kept (the newest only: one not kept reads the queue). A name not
//     protected is never kept (a foreign "lock-0000000000": one an
//     operator might make again by hand, not sequentially); nor one under
//     an unknown incarnation (czxid 0).
//     Relies on: every contender node sequential (handoffSafe), and the
//     reading's names and stat from one server state (getChildren2).
//     Broken by: a node made by hand, not sequentially, with a protected
//     contender name used before on the same incarnation of the path (its
//     UUID copied). Attacked by: TestHandoffLateRecordOfAReapedPath (a
//     lagging session's late record of a name back on a path made again,
//     proxy and paused-member forms), TestHandoffStaleGoneRecord,
//     TestHandoffGoneNamesAcrossClients, TestAdversarialMutex (foreign
//     contenders of Curator's, go-zookeeper's and plain names, operator
//     deletes, the path reaped mid-queue).
//  4. Our own node must still be there (someone may have deleted it while
//     we waited; then our successor may be handed the lock too). A
//     framework.Mark on our node, set while we wait, proves it without a
//     request: ZooKeeper sends a session its watch events in the order it
//     applied the changes, on one connection, so had our node gone (or
//     changed) before our predecessor, the mark would be spent before our
//     predecessor's event reached us; a reconnection since the mark spends
//     it too (the events replayed then come in no such order). Without an
//     intact mark: an exists of our node, one small read where reading the
//     queue again costs as many names as wait in it.
//  5. Only where it may come: a waiter marks its node (4.) only when
//     every contender before its predecessor is known gone or one of this
//     client's that hands off (the "ours" of its path), each of which
//     tells its going when its delete succeeds (3.), or its predecessor
//     is one of this client's (the first holder of a queue of one
//     client's waiters was made before any waited, so is not known as
//     ours): a queue of one client's contenders (a thousand waiters of
//     one session) is then served by notifications alone, and so is the
//     waiter right behind the holder, whoever's it is. Where another client's contender is
//     before the predecessor, this client will not learn of its going, so
//     the predecessor's going is read as Curator reads it, and the mark
//     would buy nothing: it is not set. One of ours whose going is not
//     told (its delete left to the background, its session lost) makes
//     the waiter read the queue again: slower, never wrong, since "ours"
//     decides no hold. (A look-ahead that watched the contender before
//     the predecessor, to read the queue while the predecessor held,
//     cost more client CPU than it saved on K processes of one session
//     each, and went: issue 38, 2., docs/performance.md.)
//     Attacked by: TestHandoffRecordsPerClient,
//     TestHandoffAcrossProcessesReadsOnce, TestHandoffReadsNothing.

// If every contender before our predecessor in that reading is known gone,
// and our predecessor is gone, and our node is not: we are the lowest, and
// hold. Otherwise we read the queue again, as Curator does. Curator reads
// the queue on every handoff: a round trip between the notification and
// the hold, on the path every acquisition of a contended lock waits on.
// Here, in a queue served in order, every handoff is the notification
// alone, whatever the queue's length.

// handoffSafe reports whether pred and names allow the handoff: the
// standard predicate with one holder, on one contender name.
func handoffSafe(pred Predicate, names []string) bool {
	return len(names) == 1 && reflect.ValueOf(pred).Pointer() == reflect.ValueOf(firstHolds).Pointer()
}

// handoffs is what each client of the process knows of deleted
// contenders, per path, while it waits or creates there; its own
// contenders there; how many of its creates are in flight there.
type handoffs struct {
	mu   sync.Mutex
	keys map[handoffKey]*handoff
}

// handoffKey is one client's path: what one client knows is its own (3.).
type handoffKey struct {
	c    *framework.Client
	path string
}

// process is this process's (every Driver's but a test's: OtherProcess).
var process = newHandoffs()

func newHandoffs() *handoffs { return &handoffs{keys: map[handoffKey]*handoff{}} }

type handoff struct {
	key     handoffKey
	users   int                  // waiters
	creates int                  // the client's contenders' creates in flight there
	gone    map[goneKey]struct{} // known gone (3.): protected names only, each of one incarnation
	order   []goneKey            // gone's names, oldest first
	dropped int                  // names dropped from order's front so far: order[i] is name number dropped+i
	joins   []joinAt             // when the waiters still there joined, oldest first
	ours    map[string]struct{}  // the client's contenders that hand off there (5.)
	lone    string               // or the first of them, while it is the only one
}

// goneKey names one contender node: its name on one incarnation of the
// lock path, that path's czxid (3.).
type goneKey struct {
	czxid int64
	name  string
}

// oursMax bounds an entry's ours: a name whose going is never told (its
// delete left to the background) stays until its entry goes, which a path
// contended without pause never does. Forgetting ours costs handoffs (5.).
const oursMax = 4096

// joinAt counts the waiters that joined when the next gone name would be
// number at.
type joinAt struct{ at, n int }

// goneMin is the least number of gone names a handoff entry keeps (it
// keeps twice its waiters if more, and every name gone since its oldest
// waiter joined, up to goneMax). The oldest go first: a path contended
// without pause in one process keeps its entry for good, and its gone
// names would grow with every acquisition. Forgetting one is safe: a
// waiter that asks about it is told "not known gone" and reads the queue
// again. The names waiters ask about are those deleted since their
// reading, which each made after it joined: a name gone before every
// waiter there joined is in no reading of theirs. Dropping names by
// count alone was not enough: in a queue of 10,000, each waiter queued
// with a reading of every contender before it; by the last waiters' turn
// the first names had been dropped (fewer waiters, so fewer kept), and
// each of them read the queue again: 2,494 reads of thousands of names in
// one run of bench's waiters workload, at twice the CPU per handoff.
var goneMin = 1024

// goneMax bounds the names kept for the waiters there, whenever they
// joined: one waiting for hours behind a holder while others come and give
// up would otherwise keep every name.
const goneMax = 1 << 16

// get returns c's entry of path, made if missing; hs.mu held.
func (hs *handoffs) get(c *framework.Client, path string) *handoff {
	k := handoffKey{c, path}
	h := hs.keys[k]
	if h == nil {
		h = &handoff{key: k}
		hs.keys[k] = h
	}
	return h
}

// drop forgets h once nobody waits or creates there; hs.mu held.
func (hs *handoffs) drop(h *handoff) {
	if h.users == 0 && h.creates == 0 {
		delete(hs.keys, h.key)
	}
}

// addOurs registers the client's contender name on h; hs.mu held. The
// first stays apart (lone) until a second comes: a map for one would cost
// every uncontended acquisition an allocation, for nobody to ask.
func (h *handoff) addOurs(name string) {
	switch {
	case name == "":
		return
	case h.ours == nil && h.lone == "":
		h.lone = name
		return
	case h.ours == nil || len(h.ours) >= oursMax:
		h.ours = map[string]struct{}{}
	}
	if h.lone != "" {
		h.ours[h.lone] = struct{}{}
		h.lone = ""
	}
	h.ours[name] = struct{}{}
}

// isOurs reports whether name is the client's contender (addOurs); hs.mu
// held.
func (h *handoff) isOurs(name string) bool {
	if name == h.lone {
		return name != ""
	}
	_, ok := h.ours[name]
	return ok
}

// join registers the waiter of contender name on c's path, as of the next
// gone name (at); leave it, with at, when done.
func (hs *handoffs) join(c *framework.Client, path, name string) (h *handoff, at int) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h = hs.get(c, path)
	h.users++
	h.addOurs(name)
	at = h.dropped + len(h.order)
	if k := len(h.joins); k > 0 && h.joins[k-1].at == at {
		h.joins[k-1].n++
	} else {
		h.joins = append(h.joins, joinAt{at, 1})
	}
	return h, at
}

func (hs *handoffs) leave(h *handoff, at int) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h.users--
	if i, ok := slices.BinarySearchFunc(h.joins, at, func(j joinAt, at int) int { return cmp.Compare(j.at, at) }); ok {
		h.joins[i].n--
	}
	for len(h.joins) > 0 && h.joins[0].n == 0 {
		h.joins = h.joins[1:]
	}
	hs.drop(h)
}

// create registers a contender's create on the client's path until
// created (any driver's, handing off or not). crowded: another create of
// the client is in flight there, or a waiter of it that hands off waits
// (then the new contender is not alone). sibling: another create of the
// client is in flight there (then a reading may be shared: shared.go).
func (hs *handoffs) create(c *framework.Client, path string) (h *handoff, crowded, sibling bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h = hs.get(c, path)
	crowded, sibling = h.creates > 0 || h.users > 0, h.creates > 0
	h.creates++
	return h, crowded, sibling
}

// created ends a create registered by create. ours: the name made, of a
// contender that hands off ("" if none). The client's own are known while
// its entry lasts: a contender made alone, held with no waiter of the
// client there, is forgotten (the next waiters read the queue once it
// goes).
func (hs *handoffs) created(h *handoff, ours string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h.creates--
	h.addOurs(ours)
	hs.drop(h)
}

// deleted records that the contender name of path's incarnation czxid is
// gone, for c, if c waits or creates there (the newest names only:
// goneMin), its name is protected and its incarnation known (3.).
func (hs *handoffs) deleted(c *framework.Client, path string, czxid int64, name string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.keys[handoffKey{c, path}]
	if h == nil {
		return
	}
	if h.lone == name {
		h.lone = ""
	}
	delete(h.ours, name)
	k := goneKey{czxid, name}
	if _, ok := h.gone[k]; ok || czxid == 0 || !framework.IsProtected(name) {
		return
	}
	if h.gone == nil {
		h.gone = map[goneKey]struct{}{} // made by the first: most entries are a create's alone
	}
	h.gone[k] = struct{}{}
	h.order = append(h.order, k)
	oldest := h.dropped + len(h.order) // no waiter: none is needed
	if len(h.joins) > 0 {
		oldest = h.joins[0].at
	}
	for len(h.order) > max(goneMin, 2*h.users) && (h.dropped < oldest || len(h.order) > goneMax) {
		delete(h.gone, h.order[0])
		h.order[0] = goneKey{}
		h.order = h.order[1:]
		h.dropped++
	}
}

// goneBefore reports whether every contender before index i of q is
// known gone, as a node of q's incarnation. q keeps how far it has found them gone, so
// that a thousand waiters of one reading check each name once between
// them.
func (hs *handoffs) goneBefore(h *handoff, q *Queue, i int) bool {
	return hs.allBefore(q, i, &q.gone, func(name string) bool { return h.goneIn(q.czxid, name) })
}

// allBefore reports whether ok holds for every contender before index i
// of q, from *from on, and moves *from (one of q's cursors) past those
// found so.
func (hs *handoffs) allBefore(q *Queue, i int, from *int, ok func(name string) bool) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for ; *from < i; *from++ {
		if !ok(q.entries[*from].name) {
			return false
		}
	}
	return true
}

// goneIn reports whether the contender name of the path's incarnation
// czxid is known gone; hs.mu held.
func (h *handoff) goneIn(czxid int64, name string) bool {
	_, ok := h.gone[goneKey{czxid, name}]
	return ok && czxid != 0
}

// toldBefore reports whether a handoff may come to the waiter on pred, at
// index i of q (5.): every contender before i is known gone (as a node of
// q's incarnation) or one of the client's that hands off, which tells its
// own going, or pred is one of the client's. q keeps how far it has found
// them so.
func (hs *handoffs) toldBefore(h *handoff, q *Queue, i int, pred string) bool {
	told := func(name string) bool { return h.isOurs(name) || h.goneIn(q.czxid, name) }
	if hs.allBefore(q, i, &q.told, told) {
		return true
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return h.isOurs(pred)
}
