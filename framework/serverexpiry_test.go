package framework_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// Issue 38 item 5: partitioned, the client declares its session lost no
// later than the server expires it. The server counts the session timeout
// from the last request it received; the client counts it from the
// sending of the last request it had a reply to (a ping at worst), which
// the server received no earlier. The partition drops the traffic and
// keeps the sockets open, so the client notices only by its read timeout,
// two thirds of the timeout after the last reply: counting from then, as
// Curator does, it declared the loss 6.7 s after the partition at 4 s
// sessions, the server having expired the session at about 4.
//
// The server's tick is ZooKeeper's default, 2 s: it expires a session at
// the first tick after the timeout, so the client, on time, is ahead by up
// to a tick, never by nothing.
func TestSessionDeclaredLostNoLaterThanTheServerExpiresIt(t *testing.T) {
	const timeout = 4 * time.Second
	srv, err := zktest.NewServer(zktest.WithTickTime(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	px := zktest.StartProxy(t, srv.ConnectString())
	c := newClient(t, px.Addr(), framework.WithSessionTimeout(timeout))
	s := c.Session()
	if s.Timeout() != timeout {
		t.Fatalf("session timeout %v granted, want %v", s.Timeout(), timeout)
	}
	var lostAt time.Time
	lost := make(chan struct{})
	go func() { <-s.Done(); lostAt = time.Now(); close(lost) }()

	cut := time.Now()
	px.Blackhole()
	defer px.Heal()
	testenv.WaitFor(t, testenv.WaitLong, "the server to expire the session", func() bool {
		ids, err := srv.Sessions()
		return err == nil && !slices.Contains(ids, s.ID())
	})
	goneAt := time.Now()
	declared := s.Lost() // when the server is seen to have expired it
	testenv.Recv(t, lost, testenv.WaitLong, "the client to declare its session lost")
	t.Logf("after the partition: the client declared the session lost at %v, the server was seen to expire it at %v",
		lostAt.Sub(cut).Round(time.Millisecond), goneAt.Sub(cut).Round(time.Millisecond))
	if !declared {
		t.Fatalf("the client declared its session lost %v after the partition, after the server expired it (seen at %v)",
			lostAt.Sub(cut).Round(time.Millisecond), goneAt.Sub(cut).Round(time.Millisecond))
	}
	if !errors.Is(s.Err(), curator.ErrSessionLost) {
		t.Fatalf("session error %v, want ErrSessionLost", s.Err())
	}
	if lostAt.Sub(cut) < timeout/2 {
		t.Fatalf("the session declared lost %v after the partition, sooner than anything explains", lostAt.Sub(cut))
	}
}
