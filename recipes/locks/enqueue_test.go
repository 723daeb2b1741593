package locks_test

import (
	"testing"
	"time"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

// A waiter's node is known while it waits (issue 14 item 9): WithOnEnqueue
// reports it as soon as it is made; it is in the queue behind the holder,
// and it is the node the waiter then holds.
func TestMutexOnEnqueue(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, time.Minute)
	path := lockPath(t)
	holder := newMutex(t, c, path)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	nodes := make(chan string, 1)
	waiter := newMutex(t, c, path, locks.WithOnEnqueue(func(node string) { nodes <- node }))
	errc := make(chan error, 1)
	go func() { errc <- waiter.Lock(ctx) }()
	var node string
	select {
	case node = <-nodes:
	case err := <-errc:
		t.Fatalf("waiter returned before it was enqueued: %v", err)
	case <-ctx.Done():
		t.Fatal("no node reported")
	}
	parts, err := holder.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0] != holder.Node() || parts[1] != node {
		t.Fatalf("queue %v, want [%s %s]", parts, holder.Node(), node)
	}
	if waiter.IsAcquiredInThisProcess() {
		t.Fatal("the waiter holds while the holder does")
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if waiter.Node() != node {
		t.Fatalf("holds %s, was enqueued as %s", waiter.Node(), node)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
