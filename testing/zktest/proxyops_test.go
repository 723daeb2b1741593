package zktest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

func TestProxyCountsRequestsPerOp(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	p := zktest.StartProxy(t, s.Addr())
	direct := connect(t, s.Addr(), 2*time.Second)
	acl := zk.WorldACL(zk.PermAll)
	for _, path := range []string{"/n", "/n/a"} {
		if _, err := direct.Create(path, nil, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	// A short session pings every ~130 ms: pings must not be counted.
	c := connect(t, p.Addr(), 400*time.Millisecond)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		_, _, err := c.Children("/n")
		must(err)
	}
	for range 3 {
		_, _, _, err := c.ChildrenW("/n")
		must(err)
	}
	_, _, err := c.Get("/n")
	must(err)
	for range 2 {
		_, _, _, err := c.GetW("/n/a")
		must(err)
	}
	_, _, err = c.Exists("/n")
	must(err)
	_, _, _, err = c.ExistsW("/missing")
	must(err)
	_, err = c.Create("/m", nil, 0, acl)
	must(err)
	must(c.Delete("/m", -1))
	testenv.Eventually(t, testenv.WaitShort, "condition", func() error {
		if n := p.PingsSeen(); n < 2 {
			return fmt.Errorf("%d pings seen", n)
		}
		return nil
	})

	for _, w := range []struct {
		op           zktest.Op
		all, watched int
	}{
		// go-zookeeper's Children and ChildrenW send getChildren2
		{zktest.OpGetChildren2, 5, 3},
		{zktest.OpGetChildren, 0, 0},
		{zktest.OpGetData, 3, 2},
		{zktest.OpExists, 2, 1},
		{zktest.OpCreate, 1, 0},
		{zktest.OpDelete, 1, 0},
		{zktest.OpPing, 0, 0},
		{zktest.OpSetData, 0, 0},
	} {
		if n, nw := p.Requests(w.op), p.WatchRequests(w.op); n != w.all || nw != w.watched {
			t.Errorf("%v: %d requests, %d with a watch; want %d, %d", w.op, n, nw, w.all, w.watched)
		}
	}

	p.ResetCounts()
	if n := p.Requests(zktest.OpGetChildren2); n != 0 {
		t.Errorf("after ResetCounts: %d getChildren2", n)
	}
	_, _, _, err = c.ChildrenW("/n")
	must(err)
	if n, nw := p.Requests(zktest.OpGetChildren2), p.WatchRequests(zktest.OpGetChildren2); n != 1 || nw != 1 {
		t.Errorf("after ResetCounts and one ChildrenW: %d, %d; want 1, 1", n, nw)
	}
}

type result struct {
	err error
	at  time.Time
}

func TestProxyHoldReplyRelease(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	p := zktest.StartProxy(t, s.Addr())
	direct := connect(t, s.Addr(), 2*time.Second)
	c := connect(t, p.Addr(), 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	h := p.HoldReply(zktest.OpCreate)
	created := make(chan result, 1)
	go func() {
		_, err := c.Create("/held", []byte("x"), 0, zk.WorldACL(zk.PermAll))
		created <- result{err, time.Now()}
	}()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := direct.Exists("/held"); err != nil || !ok {
		t.Fatalf("direct Exists(/held) = %v, %v while its create's reply is held; want true", ok, err)
	}
	// A later request on the same connection: its reply queues behind.
	read := make(chan result, 1)
	go func() {
		_, _, err := c.Get("/held")
		read <- result{err, time.Now()}
	}()
	testenv.Eventually(t, testenv.WaitShort, "condition", func() error {
		if n := p.Requests(zktest.OpGetData); n != 1 {
			return fmt.Errorf("%d getData forwarded", n)
		}
		return nil
	})
	select {
	case r := <-created:
		t.Fatalf("create returned (%v) while its reply was held", r.err)
	case r := <-read:
		t.Fatalf("a later get returned (%v) ahead of the held reply", r.err)
	default:
	}

	released := time.Now()
	h.Release()
	var cr, rr result
	for _, ch := range []chan result{created, read} {
		select {
		case r := <-ch:
			if r.err != nil {
				t.Fatalf("after Release: %v", r.err)
			}
			if ch == created {
				cr = r
			} else {
				rr = r
			}
		case <-ctx.Done():
			t.Fatal("no reply after Release")
		}
	}
	if cr.at.Before(released) || rr.at.Before(released) {
		t.Fatal("a reply came before Release")
	}
	h.Release() // idempotent
	if n := p.Requests(zktest.OpCreate); n != 1 {
		t.Errorf("%d creates counted, want 1", n)
	}
	// the hold was one-shot
	if _, err := c.Create("/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
}

func TestProxyHoldReplyDrop(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	p := zktest.StartProxy(t, s.Addr())
	direct := connect(t, s.Addr(), 2*time.Second)
	c := connect(t, p.Addr(), 10*time.Second)
	sid := c.SessionID()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	h := p.HoldReply(zktest.OpCreate)
	created := make(chan error, 1)
	go func() {
		_, err := c.Create("/dropped", nil, 0, zk.WorldACL(zk.PermAll))
		created <- err
	}()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	mark := c.mark()
	h.Drop()
	select {
	case err := <-created:
		if !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("create after Drop = %v, want ErrConnectionClosed", err)
		}
	case <-ctx.Done():
		t.Fatal("create did not return after Drop")
	}
	if ok, _, err := direct.Exists("/dropped"); err != nil || !ok {
		t.Fatalf("direct Exists(/dropped) = %v, %v; want true (the create took effect)", ok, err)
	}
	c.waitEvent(t, mark, 10*time.Second, isState(zk.StateHasSession))
	if c.SessionID() != sid {
		t.Fatalf("session changed from %x to %x", sid, c.SessionID())
	}
	if _, err := c.Create("/dropped", nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create again = %v, want ErrNodeExists", err)
	}
}

func TestProxyHoldReplyDisarmAndLoss(t *testing.T) {
	t.Parallel()
	s := zktest.StartServer(t)
	p := zktest.StartProxy(t, s.Addr())
	c := connect(t, p.Addr(), 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Released before any request: disarmed, the create goes through.
	h := p.HoldReply(zktest.OpCreate)
	h.Release()
	if _, err := c.Create("/free", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx); !errors.Is(err, zktest.ErrReplyLost) {
		t.Fatalf("Wait on a disarmed hold = %v, want ErrReplyLost (no reply will come)", err)
	}

	// A sync claimed while a create's reply is held ahead of it: its reply
	// cannot reach the proxy before the create's is dropped, which closes
	// the connection. Wait reports it lost.
	first := p.HoldReply(zktest.OpCreate)
	second := p.HoldReply(zktest.OpSync)
	errs := make(chan error, 2)
	go func() {
		_, err := c.Create("/first", nil, 0, zk.WorldACL(zk.PermAll))
		errs <- err
	}()
	if err := first.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := c.Sync("/")
		errs <- err
	}()
	testenv.Eventually(t, testenv.WaitShort, "condition", func() error {
		if n := p.Requests(zktest.OpSync); n != 1 {
			return fmt.Errorf("%d syncs forwarded", n)
		}
		return nil
	})
	first.Drop()
	if err := second.Wait(ctx); !errors.Is(err, zktest.ErrReplyLost) {
		t.Fatalf("Wait for a reply behind a dropped one = %v, want ErrReplyLost", err)
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, zk.ErrConnectionClosed) {
			t.Errorf("request on the dropped connection = %v, want ErrConnectionClosed", err)
		}
	}
}
