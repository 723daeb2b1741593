package framework_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/retry"
)

// One connection wait per operation: with the server unreachable (a black
// hole: the client cannot even tell a dial failed), a call with a policy
// of N retries waits for a connection once, the connection timeout, and
// then each retry fails at once: never N+1 connection timeouts
// (go-zookeeper would otherwise queue each attempt until a reconnection).
// The policy records when it is asked: N+1 times, the first after the
// connection timeout, the last less than a connection timeout after the
// first (the sleeps between are 20 ms each, so only a stall of seconds
// could make them add up to one). The connection timeout is well inside
// the session timeout, which starts at the suspension: the session is not
// lost before Get gives up.
func TestOneConnectionWaitPerOperation(t *testing.T) {
	const (
		connTimeout = 2 * time.Second
		retries     = 4
		sleep       = 20 * time.Millisecond
	)
	for _, tc := range []struct {
		name  string
		retry int
	}{{"RetryOneTime", 1}, {"RetryNTimes", retries}} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProxyFor(t)
			inner, err := retry.NewNTimes(tc.retry, sleep)
			if err != nil {
				t.Fatal(err)
			}
			policy := &askedPolicy{Policy: inner}
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

			policy.record.Store(true)
			start := time.Now()
			_, _, err = c.Get(ctx, "/node")
			elapsed := time.Since(start)
			policy.record.Store(false)
			asked := policy.got()
			t.Logf("Get with %d retries while partitioned: %v after %v; the policy was asked at %v", tc.retry, err, elapsed, asked)
			if !errors.Is(err, curator.ErrConnectionLoss) {
				t.Fatalf("Get while partitioned: %v, want ErrConnectionLoss", err)
			}
			if len(asked) != tc.retry+1 {
				t.Fatalf("the policy was asked %d times, want %d (once per attempt)", len(asked), tc.retry+1)
			}
			if asked[0] < connTimeout {
				t.Fatalf("Get gave up its first attempt after %v, before the connection timeout %v", asked[0], connTimeout)
			}
			if spread := asked[len(asked)-1] - asked[0]; spread >= connTimeout {
				t.Fatalf("the retries took %v after the first connection wait: another connection wait (%v)", spread, connTimeout)
			}
		})
	}
}

// askedPolicy is a retry policy that records, while record is set, the
// elapsed time it is asked at.
type askedPolicy struct {
	retry.Policy
	record atomic.Bool
	mu     sync.Mutex
	asked  []time.Duration
}

func (p *askedPolicy) Next(n int, elapsed time.Duration) (time.Duration, bool) {
	if p.record.Load() {
		p.mu.Lock()
		p.asked = append(p.asked, elapsed)
		p.mu.Unlock()
	}
	return p.Policy.Next(n, elapsed)
}

func (p *askedPolicy) got() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}
