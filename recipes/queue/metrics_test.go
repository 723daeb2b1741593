package queue_test

import (
	"testing"

	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/telemetry/telemetrytest"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/queue"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	rig := telemetrytest.New(t)
	c := newClient(t, testenv.Shared().ConnectString(), rig.Options()...)
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	col := newCollector[string]()
	q, err := queue.New(c, path, queue.String{}, col.consume, queue.WithLockPath(path+"-locks"))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := q.PutMulti(ctx, []string{"b", "c"}); err != nil {
		t.Fatal(err)
	}
	if got := rig.Sum(t, telemetry.MetricQueueItems, telemetry.KeyQueueOp.String("put")); got != 3 {
		t.Fatalf("items put = %d, want 3", got)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	col.next(t, 3)
	rig.WaitSum(t, testenv.WaitShort, 3, telemetry.MetricQueueItems, telemetry.KeyQueueOp.String("consumed"))
	rig.WaitCount(t, testenv.WaitShort, 2, telemetry.MetricQueueAge) // two nodes taken
	rig.WaitSum(t, testenv.WaitShort, 0, telemetry.MetricQueueDepth) // the last listing saw none
	if err := q.Put(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	col.next(t, 1)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rig.Sum(t, telemetry.MetricQueueDepth); got != 0 {
		t.Fatalf("depth after Close = %d, want 0", got)
	}
}
