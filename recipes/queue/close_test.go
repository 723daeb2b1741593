package queue_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/queue"
)

// A Close that comes while a consumer holds an item, the consumer then
// returning nil (it finished its work), leaves no item behind: with a lock
// path the item is deleted even though Close ended the queue's context
// meanwhile (before the fix the delete ran on the ended context, and the
// consumed item stayed, to be consumed again by the next consumer: found
// by the bench's queue workload). Deterministic: the consumer starts Close
// itself and waits for its context to end before it returns.
func TestCloseAfterConsumeDeletesItem(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	locks := path + "-locks"
	var q *queue.Queue[string]
	closed := make(chan struct{})
	q, err := queue.New(c, path, queue.String{}, func(ctx context.Context, v string) error {
		go func() { q.Close(); close(closed) }()
		<-ctx.Done() // Close has begun: the queue's context ended
		return nil   // but the item was consumed
	}, queue.WithLockPath(locks))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, "once"); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, closed, testenv.WaitShort, "Close to return")
	if left := testenv.Children(t, c, path); len(left) != 0 {
		t.Fatalf("items left after a consumed item and Close: %v (it would be consumed again)", left)
	}
	if left := testenv.Children(t, c, locks); len(left) != 0 {
		t.Fatalf("lock nodes left after Close: %v", left)
	}
}
