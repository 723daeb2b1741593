package framework_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/retry"
)

// One connection wait per operation: with the server unreachable (a black
// hole: the client cannot even tell a dial failed), a call with a policy
// of N retries returns after about one connection timeout plus the
// policy's sleeps, never N+1 connection timeouts or more (go-zookeeper
// would otherwise queue each attempt until a reconnection).
func TestOneConnectionWaitPerOperation(t *testing.T) {
	const (
		connTimeout = time.Second
		retries     = 4
		sleep       = 50 * time.Millisecond
	)
	for _, tc := range []struct {
		name  string
		retry int
	}{{"RetryOneTime", 1}, {"RetryNTimes", retries}} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProxyFor(t)
			policy, err := retry.NewNTimes(tc.retry, sleep)
			if err != nil {
				t.Fatal(err)
			}
			c, log := newRecordedClient(t, p.Addr(), framework.WithNamespace(testenv.Uniq("onewait")),
				framework.WithSessionTimeout(4*time.Second),
				framework.WithConnectionTimeout(connTimeout),
				framework.WithRetryPolicy(policy))
			t.Cleanup(p.Heal) // before Close: let go-zookeeper's handshake end
			log.wait(t, testenv.WaitShort, framework.StateConnected)
			ctx := testenv.Ctx(t, testenv.WaitShort)
			if _, err := c.Create(ctx, "/node", []byte("v")); err != nil {
				t.Fatal(err)
			}
			p.Blackhole()
			log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended)

			start := time.Now()
			_, _, err = c.Get(ctx, "/node")
			elapsed := time.Since(start)
			t.Logf("Get with %d retries while partitioned: %v after %v", tc.retry, err, elapsed)
			if !errors.Is(err, curator.ErrConnectionLoss) {
				t.Fatalf("Get while partitioned: %v, want ErrConnectionLoss", err)
			}
			// About connTimeout + retry*sleep; N+1 waits would be (retry+1)*connTimeout.
			bound := connTimeout + time.Duration(tc.retry)*sleep + 700*time.Millisecond
			if elapsed > bound {
				t.Fatalf("Get with %d retries took %v, want under %v (one connection wait)", tc.retry, elapsed, bound)
			}
			if elapsed < connTimeout {
				t.Fatalf("Get gave up after %v, before the connection timeout %v", elapsed, connTimeout)
			}
		})
	}
}
