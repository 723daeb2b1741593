package driver

import (
	"slices"
	"strings"
)

// Queue is a lock's queue as one read saw it: the contenders, sorted by
// sequence (ties by name). It is built once per read for every waiter of
// the process that shares it, so it is lean: one (sequence, name) pair per
// contender, found by binary search, no index map (a thousand waiters
// reading a queue of thousands make many of them).
type Queue struct {
	entries []entry
	czxid   int64 // the lock path's czxid in the read (its incarnation); 0 if unknown: nothing counts as gone then (handoff.go, 3.)
	gone    int   // how many of the first contenders are known gone (handoff.go; under handoffs.mu)
	told    int   // how many of the first are known gone or the client's own (handoff.go, 5.; under handoffs.mu)
}

type entry struct{ seq, name string }

// Len returns the number of contenders.
func (q *Queue) Len() int { return len(q.entries) }

// Name returns the name of the contender at place i.
func (q *Queue) Name(i int) string { return q.entries[i].name }

func compareEntries(a, b entry) int {
	if c := strings.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// queueOf sorts the contenders among children (others are left out), a
// reading of the lock path's incarnation czxid (0: unknown).
func (d *Driver) queueOf(children []string, czxid int64) *Queue {
	q := &Queue{entries: make([]entry, 0, len(children)), czxid: czxid}
	for _, ch := range children {
		if seq, ok := d.Sequence(ch); ok {
			q.entries = append(q.entries, entry{seq, ch})
		}
	}
	// Ties (a downgraded read node shares its writer's sequence) are broken
	// by name, so the order is total and no stable sort is needed.
	slices.SortFunc(q.entries, compareEntries)
	return q
}

// find returns the place of the contender name (of sort key seq).
func (q *Queue) find(seq, name string) (int, bool) {
	return slices.BinarySearchFunc(q.entries, entry{seq, name}, compareEntries)
}
