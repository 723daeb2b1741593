package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
)

// An AcquireN waiting for its set, one of whose nodes someone deletes (an
// operator), must not be granted on the others: the count rule needs every
// node of the set (driver.WaitOptions.With). It deletes what is left of
// the set and starts over with a new one, which is granted once leases are
// free.
func TestAcquireNStartsOverWhenItsSetLosesANode(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	path := semPath(t)
	held, err := newSem(t, other, path, 2).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nodes := make(chan string, 8)
	s := newSem(t, c, path, 2, semaphore.WithOnEnqueue(func(node string) { nodes <- node }))
	type result struct {
		ls  []*semaphore.Lease
		err error
	}
	got := make(chan result, 1)
	go func() { ls, err := s.AcquireN(ctx, 2); got <- result{ls, err} }()
	next := func() string {
		t.Helper()
		select {
		case n := <-nodes:
			return n
		case r := <-got:
			t.Fatalf("AcquireN returned (%v) where it should make a node", r.err)
		case <-ctx.Done():
			t.Fatal("no node made")
		}
		return ""
	}
	first := []string{next(), next()}
	// Waiting: the leases' child watch is armed, with its one waiter, and
	// the internal lock's holding watches its own node (armed, one waiter:
	// issue 38 item 3), so two armed and two waiters. (Until the gap rule
	// went, issue 38, the internal lock also kept a mark on <path>/locks.)
	// Counting only the child watch (as this test did before the mark)
	// matched only while the child read was under way, and never once it
	// had returned: a run slow to look failed.
	testenv.Eventually(t, testenv.WaitShort, "the acquirer waiting on the leases", func() error {
		select {
		case r := <-got:
			t.Fatalf("AcquireN returned (%v) where it should wait", r.err)
		default:
		}
		if armed, waiters := c.WatchStats(); armed != 2 || waiters != 2 {
			return fmt.Errorf("%d watches armed, %d waiters; want 2 and 2", armed, waiters)
		}
		return nil
	})
	if err := other.Delete(ctx, first[0]); err != nil { // an operator
		t.Fatal(err)
	}
	again := []string{next(), next()}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	var granted []string
	for _, l := range r.ls {
		granted = append(granted, l.Node())
	}
	if !slices.Equal(granted, again) {
		t.Fatalf("granted %v, want the second set %v (the first was %v)", granted, again, first)
	}
	if left := leaseNodes(t, c, path); len(left) != 2 {
		t.Fatalf("lease nodes %v, want only the two granted", left)
	}
	if err := s.ReturnAll(ctx, r.ls); err != nil {
		t.Fatal(err)
	}
}

// The same when the node goes before the set's last create: that create
// counts the children and could grant by the count alone (1 of 2 fits),
// without looking at the set's other nodes. Every lease granted must have
// its node, and no other process gets a third lease.
func TestAcquireNNotGrantedByCountOnASetMissingANode(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	path := semPath(t)
	var made atomic.Int32
	s := newSem(t, c, path, 2, semaphore.WithOnEnqueue(func(node string) {
		if made.Add(1) == 1 { // an operator, before the set's second create
			if err := other.Delete(ctx, node); err != nil {
				t.Error(err)
			}
		}
	}))
	ls, err := s.AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.ReturnAll(context.Background(), ls) })
	for _, l := range ls {
		if ok, _, err := other.Exists(ctx, l.Node()); err != nil || !ok {
			t.Errorf("granted %s, whose node does not exist (%v)", l.Node(), err)
		}
	}
	if l, err := newSem(t, other, path, 2).TryAcquire(ctx); !errors.Is(err, curator.ErrLocked) {
		if err == nil {
			l.Release(ctx)
		}
		t.Fatalf("another process's TryAcquire beside a granted set of 2 (max 2): %v; want ErrLocked", err)
	}
}
