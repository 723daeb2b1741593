package queue_test

import (
	"context"
	"testing"

	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/testing/zktest"
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

// A claim (the lock node's create, a one-op multi sent once) whose reply
// is lost: the node was made, by this consumer's session. The consumer
// reads the node's owner, finds it its own, and consumes the item at once,
// exactly once; it does not skip an item only it holds, which would wait
// until its session ended.
func TestClaimLostReplyResolved(t *testing.T) {
	t.Parallel()
	srv := testenv.Shared()
	px := zktest.StartProxy(t, srv.Addr())
	c := newClient(t, px.Addr()+srv.Chroot())
	producer := newClient(t, srv.ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := queuePath(t)
	locks := path + "-locks"
	p, _ := queue.New[string](producer, path, queue.String{}, nil)
	if err := p.Put(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	sid := c.Session().ID()
	held := px.HoldReply(zktest.OpMulti)
	col := newCollector[string]()
	q, err := queue.New(c, path, queue.String{}, col.consume, queue.WithLockPath(locks), queue.WithOnError(func(err error) { t.Log(err) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	held.Drop() // the lock node is made; its reply never arrives
	if got := col.next(t, 1); got[0] != "x" {
		t.Fatalf("consumed %v", got)
	}
	testenv.WaitFor(t, testenv.WaitShort, "queue and locks empty", func() bool {
		return len(testenv.Children(t, producer, path)) == 0 && len(testenv.Children(t, producer, locks)) == 0
	})
	if got := c.Session().ID(); got != sid {
		t.Fatalf("session %x replaced by %x: the item was taken after a session end, not by its claim", sid, got)
	}
	select {
	case v := <-col.ch:
		t.Fatalf("%q consumed twice", v)
	default:
	}
}
