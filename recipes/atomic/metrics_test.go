package atomic_test

import (
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/telemetry/telemetrytest"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/retry"
)

// curator.atomic.retries counts the tries of a call beyond its first
// (those after a conflict), curator.atomic.promotions each call promoted
// to the lock; with WithPathAttributes the points carry the path.
func TestMetrics(t *testing.T) {
	rig := telemetrytest.New(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	srv := testenv.Shared()
	c := testenv.Client(t, srv.ConnectString(), rig.Options(framework.WithPathAttributes())...)
	other := testenv.Client(t, srv.ConnectString())
	path := atomicPath(t)
	policy, err := retry.NewNTimes(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	l := newLong(t, c, path, atomic.WithRetryPolicy(policy), atomic.WithPromotedToLock(path+"-lock"),
		atomic.WithPromotedTimeout(time.Minute))
	at, rec := telemetry.KeyPath.String(path), telemetry.KeyRecipe.String(telemetry.RecipeAtomic)
	if r, err := l.Increment(ctx); err != nil || r.Stats.OptimisticTries != 1 {
		t.Fatalf("uncontended Increment: %+v %v", r, err)
	}
	if got := rig.Sum(t, telemetry.MetricAtomicRetries, rec, at); got != 0 {
		t.Fatalf("retries after an uncontended increment: %d", got)
	}
	// The three optimistic tries lose (someone writes between our read
	// and our write); the promoted one wins.
	writes := 0
	atomic.SetWriteHook(func(string) {
		if writes++; writes <= 3 {
			if _, err := other.Set(ctx, path, []byte{0, 0, 0, 0, 0, 0, 0, 9}); err != nil {
				t.Error(err)
			}
		}
	})
	t.Cleanup(func() { atomic.SetWriteHook(nil) })
	r, err := l.Increment(ctx)
	atomic.SetWriteHook(nil)
	if err != nil || !r.Succeeded || r.PostValue != 10 || r.Stats.OptimisticTries != 3 || r.Stats.PromotedTries != 1 {
		t.Fatalf("contended Increment: %+v %v, want 3 optimistic tries, 1 promoted, 9 -> 10", r, err)
	}
	rig.WaitSum(t, testenv.WaitShort, 2, telemetry.MetricAtomicRetries, rec, at)
	rig.WaitSum(t, testenv.WaitShort, 1, telemetry.MetricAtomicPromotions, rec, at)
}
