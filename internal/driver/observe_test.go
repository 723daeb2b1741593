package driver_test

import (
	"sync"
	"testing"

	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// OnLoss: a callback registered before the loss is called once with its
// reason; one registered after is called at once with the same reason.
// Reasons: a deleted node, a suspended connection, a closed client.
func TestHoldOnLoss(t *testing.T) {
	cases := []struct {
		name string
		want telemetry.LossReason
		lose func(t *testing.T, c *zktest.Proxy, h *driver.Hold, close func())
	}{
		{"node deleted", telemetry.LossNodeDeleted, func(t *testing.T, _ *zktest.Proxy, h *driver.Hold, _ func()) {
			other := testenv.Client(t, testenv.Shared().ConnectString())
			if err := other.Delete(testenv.Ctx(t, testenv.WaitShort), h.Node()); err != nil {
				t.Fatal(err)
			}
		}},
		{"suspended", telemetry.LossSuspended, func(_ *testing.T, px *zktest.Proxy, _ *driver.Hold, _ func()) {
			px.Blackhole()
		}},
		{"closed", telemetry.LossClosed, func(_ *testing.T, _ *zktest.Proxy, _ *driver.Hold, close func()) { close() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			px := zktest.StartProxy(t, testenv.Shared().Addr())
			c := testenv.Client(t, px.Addr())
			ctx := testenv.Ctx(t, testenv.WaitLong)
			ct := acquired(t, ctx, c)
			h := ct.Hold(ctx, driver.HoldOptions{WatchNode: true})
			var mu sync.Mutex
			var got []telemetry.LossReason
			h.OnLoss(func(r telemetry.LossReason) { mu.Lock(); got = append(got, r); mu.Unlock() })
			tc.lose(t, px, h, func() { c.Close() })
			select {
			case <-h.Lost():
			case <-ctx.Done():
				t.Fatal("not lost")
			}
			testenv.WaitFor(t, testenv.WaitShort, "the callback", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 })
			late := make(chan telemetry.LossReason, 1)
			h.OnLoss(func(r telemetry.LossReason) { late <- r })
			if r := <-late; r != tc.want {
				t.Fatalf("late callback: %v, want %v", r, tc.want)
			}
			px.Heal()
			_ = h.Release(ctx)
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("callback calls %v, want one %v", got, tc.want)
			}
		})
	}
}
