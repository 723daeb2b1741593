package driver

import (
	"strconv"
	"sync/atomic"
)

// The gap rule: a new contender of a busy lock may take its first
// decision on the last reading of the queue that the driver made, instead
// of reading it again (one request of five per contended acquisition: the
// bare go-zookeeper lock makes create, getChildren, getData, getChildren,
// delete), when its own sequence number proves that nothing was made on
// the path since the highest contender of that reading. The proof, for the
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
//  4. So L, with ours at its end, holds every contender before ours and
//     perhaps some that have gone since: deciding on it is deciding on a
//     queue that may be longer than the real one, never shorter. Its first
//     decision can only be to wait (L holds another contender, or the rule
//     is not used), on its last contender: if that one goes, its waiter
//     reads the queue again like any other.
//  5. One hole: 1-3 assume one parent. A lock path is a container, reaped
//     by the server once empty and made again by the next create, with its
//     counter back at zero; between L and our create that could happen.
//     So the queue is taken as proved only once a contender of L is found
//     still there after our create (the watch on our predecessor is set):
//     a child pins its parent. Until then (the predecessor is already
//     gone when the watch is set), the waiter reads the queue again, and
//     the handoff does not apply (Wait's round.unproved).

// gapMax bounds the readings the rule is tried on: copying one costs a
// contender per entry, so a long queue (a thousand waiters of one process)
// reads the queue instead, as one shared read.
const gapMax = 64

// lastRead is what a driver keeps of its last reading of the queue, for
// the gap rule.
type lastRead struct {
	q        atomic.Pointer[Queue]
	released atomic.Pointer[Contender] // the last of ours whose node is deleted
}

// read records a reading of the queue the driver decided on.
func (l *lastRead) read(q *Queue) { l.q.Store(q) }

// deleted records that c's node is gone.
func (l *lastRead) deleted(c *Contender) { l.released.Store(c) }

// after returns the queue as it is known to stand right after c's create by
// the gap rule (c last), or nil if the rule does not apply.
func (l *lastRead) after(c *Contender) *Queue {
	last := l.q.Load()
	if last == nil || last.Len() == 0 || last.Len() > gapMax {
		return nil
	}
	top, err1 := strconv.ParseInt(last.entries[last.Len()-1].seq, 10, 64)
	ours, err2 := strconv.ParseInt(c.seq, 10, 64)
	if err1 != nil || err2 != nil || ours != top+1 {
		return nil
	}
	var released string
	if r := l.released.Load(); r != nil {
		released = r.name
	}
	q := &Queue{entries: make([]entry, 0, last.Len()+1)}
	for _, e := range last.entries {
		if e.name != released {
			q.entries = append(q.entries, e)
		}
	}
	if q.Len() == 0 {
		return nil // it would hold on an unproved queue (5.): read it
	}
	q.entries = append(q.entries, entry{c.seq, c.name})
	return q
}
