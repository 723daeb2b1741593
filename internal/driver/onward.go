package driver

// Onward: a read lock's waiter whose writer goes decides again on the
// reading it waited with, from that writer's successor on, without
// reading the queue again. Curator reads the queue after every wake of a
// waiting reader: a round trip between a writer's release and the reads
// queued behind it, on the path that every acquisition queued behind a
// write waits on (issue 16). The proof, for a Predicate that decides
// Onward (NoneBefore, the read lock's):
//
//  1. Only writers before ours decide: NoneBefore holds unless a
//     contender named as a writer is before ours. Readers come and go
//     before us without changing the decision, and contenders after ours
//     never count.
//  2. No writer can appear before ours once our node exists. The server
//     numbers a path's sequential nodes in creation order, and every
//     writer, ours or Curator's, is made ephemeral-sequential. The one
//     node made with a chosen sequence, the downgrade's (CURATOR-621), is
//     a reader's, which 1. ignores. The path's counter cannot start again
//     while our node is its child (the server reaps a container only once
//     it is empty).
//  3. So every writer before ours is in any reading of the queue sent
//     after our create (the listing behind it, or a shared read, never
//     older than its call), and once a writer is seen gone (its
//     NodeDeleted event, or a watched getData that found no node) it is
//     gone for good: names are unique, and a protected create that
//     retries makes a new name.
//  4. NoneBefore waits on the first writer of the reading before ours. So
//     when that one is gone, the writers before ours still possibly there
//     are those of the reading after it: the reading's rest, from its
//     successor on, decides as a new reading would.
//  5. Our own node must still be there when the writer goes, or our
//     decision would count a node someone deleted (an operator, a script)
//     while a writer queued behind us takes the lock. A framework.Mark on
//     our node, set before the writer is watched, proves it without a
//     request (handoff.go, 4.: events come in the order the server applied
//     the changes). A spent mark, or a lost session, and the waiter reads
//     the queue again, as Curator does.
//
// The price is the mark: one request per wait, set while the writer still
// holds, against one read of the queue per wake, made after it released.
// Attacked by: TestOnwardPastEachWriter, TestOnwardWriterGoneBeforeItsWatch,
// TestOnwardNotWithOurNodeGone (an operator's delete of our node),
// TestOnwardReadsAgainAfterAReconnect, TestOnwardNotForAWriter.
// The rule is off where it would not hold: for a writer (a downgrade puts
// a reader before it, which counts for it), for the mutex (whose handoff,
// handoff.go, does more), for a Predicate that waits for any change, and
// for an acquisition of several nodes (WaitOptions.With: its other nodes
// may sort before the writer gone).

// onward takes pred's going for a decision that is Onward: if our node's
// mark is intact, the next decision is made on the rest of the reading
// (r.next), not on a new one.
func (c *Contender) onward(r *round) {
	if !r.onward || !r.own.Intact() || c.session.Lost() {
		return
	}
	seq, _ := c.d.Sequence(r.pred) // a name the predicate chose: a contender's
	if i, ok := r.q.find(seq, r.pred); ok {
		r.next = &Queue{entries: r.q.entries[i+1:], czxid: r.q.czxid}
	}
}
