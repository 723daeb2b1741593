package zktest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// ruokVia sends ruok through addr and returns the reply.
func ruokVia(addr string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, "ruok"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

func TestProxyForwardsRefusesDelaysBlackholes(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	p := zktest.StartProxy(t, s.Addr())
	if r, err := ruokVia(p.Addr(), 3*time.Second); err != nil || r != "imok" {
		t.Fatalf("ruok via proxy = %q, %v", r, err)
	}

	p.Refuse(true)
	if r, err := ruokVia(p.Addr(), 3*time.Second); r == "imok" {
		t.Fatalf("refusing proxy forwarded: %q, %v", r, err)
	}
	p.Heal()

	p.SetDelay(200 * time.Millisecond)
	t0 := time.Now()
	if r, err := ruokVia(p.Addr(), 3*time.Second); err != nil || r != "imok" {
		t.Fatalf("ruok via delaying proxy = %q, %v", r, err)
	}
	if d := time.Since(t0); d < 400*time.Millisecond {
		t.Fatalf("round trip through a 200ms-per-chunk proxy took %v", d)
	}
	p.Heal()

	p.Blackhole()
	if r, err := ruokVia(p.Addr(), 500*time.Millisecond); err == nil || r != "" {
		t.Fatalf("black hole forwarded: %q, %v", r, err)
	}
	p.Heal()
	if r, err := ruokVia(p.Addr(), 3*time.Second); err != nil || r != "imok" {
		t.Fatalf("ruok via healed proxy = %q, %v", r, err)
	}
}

func TestProxyDropReconnects(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	p := zktest.StartProxy(t, s.Addr())
	c := connect(t, p.Addr(), 2*time.Second)
	sid := c.SessionID()
	if p.Conns() != 1 {
		t.Fatalf("Conns = %d, want 1", p.Conns())
	}
	m := c.mark()
	p.Drop()
	m = c.waitEvent(t, m, 5*time.Second, isState(zk.StateDisconnected))
	c.waitEvent(t, m, 5*time.Second, isState(zk.StateHasSession))
	if c.SessionID() != sid {
		t.Fatalf("session changed from %x to %x after a drop", sid, c.SessionID())
	}
	if _, err := c.Create("/after-drop", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
}

func TestExpireSession(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	p := zktest.StartProxy(t, s.Addr())
	c := connect(t, p.Addr(), time.Second)
	old := c.SessionID()
	if _, err := c.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	m := c.mark()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	t0 := time.Now()
	if err := zktest.ExpireSession(ctx, p, s, old); err != nil {
		t.Fatal(err)
	}
	t.Logf("1s session expired by black hole after %v", time.Since(t0))
	m = c.waitEvent(t, m, 10*time.Second, isState(zk.StateExpired))
	c.waitEvent(t, m, 10*time.Second, isState(zk.StateHasSession))
	if c.SessionID() == old || c.SessionID() == 0 {
		t.Fatalf("session id %x after expiry, old %x", c.SessionID(), old)
	}
	if ok, _, err := c.Exists("/eph"); err != nil || ok {
		t.Fatalf("ephemeral of the expired session still exists (%v, %v)", ok, err)
	}
}

func TestExpireSessionCluster(t *testing.T) {
	t.Parallel()
	cl := zktest.StartCluster(t, 3)
	m := cl.Members()[0]
	p := zktest.StartProxy(t, m.Addr())
	c := connect(t, p.Addr(), time.Second)
	old := c.SessionID()
	mark := c.mark()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := zktest.ExpireSession(ctx, p, cl, old); err != nil {
		t.Fatal(err)
	}
	mark = c.waitEvent(t, mark, 10*time.Second, isState(zk.StateExpired))
	c.waitEvent(t, mark, 10*time.Second, isState(zk.StateHasSession))
	if c.SessionID() == old {
		t.Fatal("same session after expiry")
	}
}

func TestDropAfterRequestLosesResponse(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	p := zktest.StartProxy(t, s.Addr())
	direct := connect(t, s.Addr(), 2*time.Second)
	// A long session keeps pings (which are requests too) rare.
	c := connect(t, p.Addr(), 6*time.Second)
	sid := c.SessionID()
	for attempt := range 5 {
		path := fmt.Sprintf("/lost-%d", attempt)
		p.DropAfterRequest(1)
		_, err := c.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
		if err == nil {
			t.Fatalf("create %s got its response", path)
		}
		if !errors.Is(err, zk.ErrConnectionClosed) {
			t.Logf("create %s: %v", path, err)
		}
		ok, _, err := direct.Exists(path)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			// the request reached the server, the response was lost;
			// the session survives.
			c.waitEvent(t, 0, testenv.WaitShort, isState(zk.StateHasSession))
			testenv.Eventually(t, testenv.WaitShort, "condition", func() error {
				_, _, err := c.Get(path)
				return err
			})
			if c.SessionID() != sid {
				t.Fatalf("session changed from %x to %x", sid, c.SessionID())
			}
			return
		}
		t.Logf("attempt %d: a ping was the armed request; retrying", attempt)
	}
	t.Fatal("never lost a create response")
}

// echoTarget is a TCP echo server for the proxy's own tests (no ZooKeeper
// framing: the proxy passes such bytes through).
func echoTarget(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// echoVia writes s through the proxy and reads it back (deadline: the
// test's short wait).
func echoVia(t *testing.T, c net.Conn, s string) (string, error) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(testenv.WaitShort))
	b := make([]byte, len(s))
	_, err := io.ReadFull(c, b)
	return string(b), err
}

// Heal ends a delay under way: the bytes it held go on at once.
func TestProxyHealEndsADelayUnderWay(t *testing.T) {
	delaying := make(chan struct{}, 1)
	// Restored after the proxy's Close: cleanups run last registered first.
	t.Cleanup(zktest.SetProxyHooks(nil, func(*zktest.Proxy) {
		select {
		case delaying <- struct{}{}:
		default:
		}
	}))
	p := zktest.StartProxy(t, echoTarget(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.SetDelay(time.Hour)
	go func() {
		select {
		case <-delaying: // "ruok" waits out its hour
			p.Heal()
		case <-t.Context().Done():
		}
	}()
	if got, err := echoVia(t, c, "ruok"); err != nil || got != "ruok" {
		t.Fatalf("echo once healed: %q, %v", got, err)
	}
}

// A connection accepted before Drop (or Refuse) but still dialling the
// server when it came is not proxied after it: it was a current
// connection.
func TestProxyDropReachesAConnectionStillDialling(t *testing.T) {
	for _, fault := range []string{"Drop", "Refuse"} {
		t.Run(fault, func(t *testing.T) {
			t.Cleanup(zktest.SetProxyHooks(func(p *zktest.Proxy) {
				if fault == "Drop" {
					p.Drop()
				} else {
					p.Refuse(true)
				}
			}, nil))
			p := zktest.StartProxy(t, echoTarget(t))
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got, err := echoVia(t, c, "ruok"); err == nil {
				t.Fatalf("proxied after %s: echo %q", fault, got)
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("after %s: %v, want the connection closed", fault, err)
			}
		})
	}
}

// A hold no request claimed ends with Close (as when disarmed,
// TestProxyHoldReplyDisarmAndLoss): its Wait returns ErrReplyLost, never
// blocks.
func TestProxyUnclaimedHoldEnds(t *testing.T) {
	p, err := zktest.NewProxy(echoTarget(t))
	if err != nil {
		t.Fatal(err)
	}
	closed := p.HoldReply(zktest.OpCreate)
	p.Close()
	if err := closed.Wait(testenv.Ctx(t, testenv.WaitShort)); !errors.Is(err, zktest.ErrReplyLost) {
		t.Errorf("Wait on a hold its proxy closed: %v, want ErrReplyLost", err)
	}
}
