package semaphore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
)

// A waiting acquirer's lease node is known while it waits (issue 14 item
// 9): WithOnEnqueue reports it as soon as it is made; it is listed among the
// participants, and it is the lease then granted.
func TestSemaphoreOnEnqueue(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	path := semPath(t)
	held, err := newSem(t, c, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nodes := make(chan string, 1)
	s := newSem(t, c, path, 1, semaphore.WithOnEnqueue(func(node string) { nodes <- node }))
	type result struct {
		l   *semaphore.Lease
		err error
	}
	got := make(chan result, 1)
	go func() { l, err := s.Acquire(ctx); got <- result{l, err} }()
	var node string
	select {
	case node = <-nodes:
	case r := <-got:
		t.Fatalf("acquire returned before its node was made: %v", r.err)
	case <-ctx.Done():
		t.Fatal("no node reported")
	}
	parts, err := s.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(parts, []string{held.Node(), node}) {
		t.Fatalf("participants %v, want [%s %s]", parts, held.Node(), node)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.l.Node() != node {
		t.Fatalf("granted %s, enqueued %s", r.l.Node(), node)
	}
	if err := r.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
