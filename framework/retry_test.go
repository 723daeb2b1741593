package framework_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// counting is a retry policy that counts how often it is asked.
type counting struct {
	asked atomic.Int32
	retry bool
}

func (p *counting) Next(int, time.Duration) (time.Duration, bool) {
	p.asked.Add(1)
	return 20 * time.Millisecond, p.retry
}

// The retry loop: connection loss is retried per the policy and reaches
// the caller as ErrConnectionLoss once the policy gives up; an operation
// waiting for a connection goes through once there is one; a server's
// refusal (NoNode) is never retried; ctx bounds the whole loop.
func TestRetryLoop(t *testing.T) {
	p := startProxyFor(t)
	ns := testenv.Uniq("retry")
	giveUp := &counting{}
	c, log := newRecordedClient(t, p.Addr(), framework.WithNamespace(ns),
		framework.WithSessionTimeout(10*time.Second),
		framework.WithConnectionTimeout(200*time.Millisecond),
		framework.WithRetryPolicy(giveUp))
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/node", []byte("v")); err != nil {
		t.Fatal(err)
	}

	// Not retried: the server answered.
	before := giveUp.asked.Load()
	if _, _, err := c.Get(ctx, "/absent"); !errors.Is(err, zk.ErrNoNode) || framework.IsRetryable(err) {
		t.Fatalf("Get of a missing node: %v", err)
	}
	if giveUp.asked.Load() != before {
		t.Fatal("the policy was asked about a NoNode")
	}

	// No connection: the attempt fails with a connection loss, the policy
	// says no, the caller gets ErrConnectionLoss.
	p.Refuse(true)
	p.Drop()
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended)
	_, _, err := c.Get(ctx, "/node")
	if !errors.Is(err, curator.ErrConnectionLoss) || !framework.IsRetryable(err) {
		t.Fatalf("Get without a connection: %v, want ErrConnectionLoss", err)
	}
	var oe *framework.OpError
	if !errors.As(err, &oe) || oe.Op != "get" || oe.Path != "/node" {
		t.Fatalf("error %v does not name get /node", err)
	}
	if giveUp.asked.Load() == before {
		t.Fatal("the policy was not asked about a connection loss")
	}

	// ctx ends the wait for a connection.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, _, err = c.Get(short, "/node")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get with a short ctx and no connection: %v, want DeadlineExceeded", err)
	}

	p.Refuse(false)
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateReconnected)
	if d, _, err := c.Get(ctx, "/node"); err != nil || string(d) != "v" {
		t.Fatalf("Get after reconnection = %q, %v", d, err)
	}
}

// An operation issued while the connection is down completes once it is
// back, when the policy keeps retrying.
func TestRetryLoopRidesOutOutage(t *testing.T) {
	p := startProxyFor(t)
	c, log := newRecordedClient(t, p.Addr(), framework.WithNamespace(testenv.Uniq("retry")),
		framework.WithSessionTimeout(10*time.Second),
		framework.WithConnectionTimeout(200*time.Millisecond))
	log.wait(t, testenv.WaitShort, framework.StateConnected)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/node", []byte("v")); err != nil {
		t.Fatal(err)
	}
	p.Refuse(true)
	p.Drop()
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended)
	type result struct {
		d   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, _, err := c.Get(ctx, "/node")
		done <- result{d, err}
	}()
	// Several attempts fail meanwhile (connection timeout 200 ms).
	select {
	case r := <-done:
		t.Fatalf("Get returned without a connection: %q, %v", r.d, r.err)
	case <-time.After(time.Second): // the outage, not synchronization
	}
	p.Refuse(false)
	r := <-done
	if r.err != nil || string(r.d) != "v" {
		t.Fatalf("Get across the outage = %q, %v", r.d, r.err)
	}
}

// atOnce is a retry policy that says "again, at once" and counts how
// often it is asked.
type atOnce struct{ asked atomic.Int32 }

func (p *atOnce) Next(int, time.Duration) (time.Duration, bool) {
	p.asked.Add(1)
	return 0, true
}

// A policy whose sleep is zero does not spin while the client cannot
// connect: past the operation's connection wait, every attempt would fail
// at once; the loop waits for the connection instead (a connection
// timeout at most) before asking the policy again.
func TestRetryLoopZeroSleepWhileDisconnected(t *testing.T) {
	p := &atOnce{}
	c := testenv.ClientNoWait(t, "127.0.0.1:1", framework.WithConnectionTimeout(200*time.Millisecond), framework.WithRetryPolicy(p))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, _, err := c.Get(ctx, "/x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get with no server: %v, want the ctx's end", err)
	}
	// About one question per connection timeout: 2 s / 200 ms. Spinning,
	// it is asked thousands of times.
	if n := p.asked.Load(); n > 20 {
		t.Fatalf("the policy was asked %d times in 2 s: the loop spins", n)
	}
}
