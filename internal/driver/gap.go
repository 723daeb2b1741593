package driver

import (
	"strconv"
	"sync/atomic"

	"github.com/gocurator/curator/framework"
)

// The gap rule: a new contender may take its first decision on the last
// reading of the queue that the driver made, instead of reading it again
// (one request of five per contended acquisition: the bare go-zookeeper
// lock makes create, getChildren, getData, getChildren, delete; and one of
// three per uncontended one, where the reading is the driver's own last
// hold), when its own sequence number proves that nothing was made on the
// path since the highest contender of that reading. The proof, for the
// drivers that hand off (one contender name, first holds; handoffSafe):
//
//  1. The server numbers the children of one parent from one counter that
//     only a create moves, whatever the child's name, so sequence numbers
//     grow in creation order; none is chosen (handoffSafe, as for the
//     handoff).
//  2. Our reading L listed every child of the path that existed when it
//     was read, so every contender of sequence at most m (L's highest)
//     still there then is in L: those made later have higher numbers.
//     A contender gone never comes back (names are unique).
//  3. Our node has sequence m+1, so no child was made between L's highest
//     and ours: every contender before ours now is in L.
//  4. So L, with ours at its end and without those of ours we deleted
//     since, holds every contender before ours and perhaps some that have
//     gone since: deciding on it is deciding on a queue that may be longer
//     than the real one, never shorter. A contender first in it is first
//     in the real one; one that waits on its predecessor finds it gone, or
//     waits for it to go, like any other.
//  5. 1-3 assume one parent. A lock path is a container, reaped by the
//     server once empty and made again by the next create, with its
//     counter back at zero; between L and our create that could happen.
//     So L counts only with the framework.Mark on the path that was set
//     before L was read, and only if that mark is still intact once our
//     create has returned: the path was not deleted before the server made
//     our node. (Curator has no such rule: it always reads again.)
//     The mark is set by the parent read behind a create
//     (framework.WithParentMark), at no round trip, whenever neither the
//     driver nor its client has one intact: any intact mark of the client
//     on the path set before L was read proves the same
//     (framework.Client.MarkOn), so the drivers of one client share one.
//
// A Try uses the rule to hold, never to answer ErrLocked: a longer queue
// than the real one may say "wait" where the real one says "hold".
//
// Relies on: 1.-5. (every contender sequential; the path's mark intact
// once our create returned). Broken by: a contender made with a chosen
// sequence (the rule is off where one may be: handoffSafe), a mark
// claimed across connections (a reconnection spends it). Attacked by:
// TestGapRuleSkipsTheRead, TestGapRuleNotAcrossAGap,
// TestGapRuleAfterTheLockPathIsRemade,
// TestGapRuleAloneAfterTheLockPathIsRemade, TestAdversarialMutex (the path
// reaped between rounds: every driver's reading is of a dead incarnation).
// What it buys: docs/performance.md.

// gapMax bounds the readings the rule is tried on: copying one costs a
// contender per entry, so a long queue (a thousand waiters of one process)
// reads the queue instead, as one shared read.
const gapMax = 64

// reading is a reading of the queue and the mark set on the lock path
// before it was read.
type reading struct {
	q    *Queue
	mark *framework.Mark
}

// lastRead is what a driver keeps of its last marked reading of the queue,
// for the gap rule, and its mark on the lock path.
type lastRead struct {
	r        atomic.Pointer[reading]
	mark     atomic.Pointer[framework.Mark]
	released atomic.Pointer[Contender] // the last of ours whose node is deleted
}

// marked returns the mark to read the queue under (nil: none, and a
// reading made now will not count).
func (l *lastRead) marked() *framework.Mark { return l.mark.Load() }

// setMark records the mark a create's parent read set.
func (l *lastRead) setMark(m *framework.Mark) { l.mark.Store(m) }

// ready reports whether the next create may decide by the rule, so needs
// no parent read (its sequence may still not prove it).
func (l *lastRead) ready() bool {
	r := l.r.Load()
	return r != nil && r.mark.Intact()
}

// read records a reading of the queue read under mark m (nil: not marked,
// not recorded).
func (l *lastRead) read(q *Queue, m *framework.Mark) {
	if m != nil && q.Len() <= gapMax {
		l.r.Store(&reading{q, m})
	}
}

// deleted records that c's node is gone.
func (l *lastRead) deleted(c *Contender) { l.released.Store(c) }

// after returns the queue as it is known to stand right after c's create by
// the gap rule (c last), with the mark that proves it, or nil if the rule
// does not apply. Call it once the create has returned (5.).
func (l *lastRead) after(c *Contender) *reading {
	last := l.r.Load()
	if last == nil || last.q.Len() == 0 || !last.mark.Intact() {
		return nil
	}
	lq := last.q
	top, err1 := strconv.ParseInt(lq.entries[lq.Len()-1].seq, 10, 64)
	ours, err2 := strconv.ParseInt(c.seq, 10, 64)
	if err1 != nil || err2 != nil || ours != top+1 {
		return nil
	}
	var released string
	if r := l.released.Load(); r != nil {
		released = r.name
	}
	q := &Queue{entries: make([]entry, 0, lq.Len()+1), czxid: lq.czxid}
	for _, e := range lq.entries {
		if e.name != released {
			q.entries = append(q.entries, e)
		}
	}
	q.entries = append(q.entries, entry{c.seq, c.name})
	return &reading{q, last.mark}
}
