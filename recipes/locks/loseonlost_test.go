package locks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

// Issue 38 item 5: under LoseOnLost, a partitioned holder is told it lost
// the lock before another process can hold it. The server expires a session
// its timeout after the last request it received; the client counts its
// timeout from the sending of the last request it had a reply to, which the
// server received no earlier, so it declares the session lost no later.
// (Counting from when the client notices the disconnect, as Curator does,
// told the holder 6.7 s after the partition at 4 s sessions, while another
// process held at 4.0 s.)
//
// The partition drops the traffic and keeps the sockets open, so the client
// notices only by its read timeout. Over a slow link (400 ms each way) the
// client's count must start at the request's sending, not at its reply's
// arrival: the server received it 400 ms after the one, 400 ms before the
// other.
//
// The server's tick is ZooKeeper's default, 2 s: it expires a session at
// the first tick after the timeout. On a local link that rounding (and the
// other contender's round trips) is all the lead the holder has over the
// other, the client counting from the request's sending; with the test
// harness's 200 ms tick it came down to 16 ms in one run of 12, which the
// scheduling of a loaded machine can eat.
func TestMutexLoseOnLostToldBeforeAnotherHolds(t *testing.T) {
	const sessionTimeout = 4 * time.Second
	srv, err := zktest.NewServer(zktest.WithTickTime(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	for _, tc := range []struct {
		name  string
		delay time.Duration // each way, on the holder's link
	}{
		{"local link", 0},
		{"slow link", 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := srv.SessionTimeoutFor(sessionTimeout); err != nil || got != sessionTimeout {
				t.Fatalf("the server grants %v (%v) for %v", got, err, sessionTimeout)
			}
			px := zktest.StartProxy(t, srv.ConnectString())
			ca := testenv.Client(t, px.Addr(), framework.WithSessionTimeout(sessionTimeout))
			cb := testenv.Client(t, srv.ConnectString())
			path := lockPath(t)
			ma := newMutex(t, ca, path, locks.WithSuspendPolicy(curator.LoseOnLost))
			mb := newMutex(t, cb, path)
			ctx := testenv.Ctx(t, time.Minute)
			if err := ma.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			acquired := make(chan error, 1)
			go func() { acquired <- mb.Lock(ctx) }()
			testenv.WaitFor(t, testenv.WaitShort, "the other contender to queue", func() bool {
				return len(testenv.Children(t, cb, path)) == 2
			})
			if tc.delay > 0 {
				px.SetDelay(tc.delay)
				// A request sent and answered through the delay: the
				// last one the server hears of the session is late.
				if _, _, err := ca.Exists(ctx, path); err != nil {
					t.Fatal(err)
				}
			}
			lost := ma.Lost()
			var toldAt time.Time
			told := make(chan struct{})
			go func() { <-lost; toldAt = time.Now(); close(told) }()

			cut := time.Now()
			px.Blackhole()
			defer px.Heal()
			if err := testenv.Recv(t, acquired, testenv.WaitLong, "the other contender to acquire once the server expired the holder's session"); err != nil {
				t.Fatal(err)
			}
			acquiredAt := time.Now()
			wasTold := testenv.IsClosed(lost) // at the instant the other holds
			testenv.Recv(t, told, testenv.WaitLong, "the holder to be told it lost the lock")
			t.Logf("after the partition: holder told at %v, other contender acquired at %v",
				toldAt.Sub(cut).Round(time.Millisecond), acquiredAt.Sub(cut).Round(time.Millisecond))
			if !wasTold {
				t.Fatalf("the holder was not told it lost the lock before another process held it "+
					"(told %v after the partition, the other acquired at %v)",
					toldAt.Sub(cut).Round(time.Millisecond), acquiredAt.Sub(cut).Round(time.Millisecond))
			}
			if err := ma.Unlock(ctx); !errors.Is(err, curator.ErrLockLost) {
				t.Fatalf("the holder's Unlock after the loss: %v, want ErrLockLost", err)
			}
			if s := ca.Session(); !s.Lost() || !errors.Is(s.Err(), curator.ErrSessionLost) {
				t.Fatalf("the holder's session: lost %v, err %v; want lost with ErrSessionLost", s.Lost(), s.Err())
			}
			if err := mb.Unlock(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
