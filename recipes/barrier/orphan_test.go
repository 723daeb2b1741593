package barrier_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/barrier"
)

// ZooKeeper request opcodes the sniffer records.
const (
	opCreate          = 1
	opDelete          = 2
	opCreate2         = 15
	opCreateContainer = 19
)

// wire is a client connection that records the requests written (opcode
// and path) and can hold the replies: while held, whatever the client
// reads is kept from it until release.
type wire struct {
	mu      sync.Mutex
	reqs    []request
	changed chan struct{}
	hold    chan struct{} // nil: replies flow; else closed to release them
}

type request struct {
	op   int32
	path string
}

func newWire() *wire { return &wire{changed: make(chan struct{})} }

func (w *wire) dialer(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, w: w}, nil
}

// holdReplies keeps replies from the client until the returned func is
// called (once or more). Should the test end first, a clean-up registered
// now releases them: call it after the client is made, so that this runs
// before the client's Close, which would otherwise wait on a held reply.
func (w *wire) holdReplies(t testing.TB) (release func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	w.hold = ch
	w.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			w.mu.Lock()
			w.hold = nil
			w.mu.Unlock()
			close(ch)
		})
	}
	t.Cleanup(release)
	return release
}

// count returns how many requests with op (any of) under parent were written,
// and a channel closed at the next request.
func (w *wire) count(parent string, ops ...int32) (int, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.reqs {
		for _, op := range ops {
			if r.op == op && framework.ParentPath(r.path) == parent {
				n++
			}
		}
	}
	return n, w.changed
}

// await waits until at least n such requests were written, or d passes.
func (w *wire) await(d time.Duration, n int, parent string, ops ...int32) bool {
	deadline := time.After(d)
	for {
		got, ch := w.count(parent, ops...)
		if got >= n {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

type wireConn struct {
	net.Conn
	w *wire
}

func (c *wireConn) Write(b []byte) (int, error) {
	// One request per write: length, xid, opcode, then (for these ops) the path.
	if len(b) >= 16 {
		op := int32(binary.BigEndian.Uint32(b[8:12]))
		if n := int(binary.BigEndian.Uint32(b[12:16])); op != 11 && n > 0 && 16+n <= len(b) {
			c.w.mu.Lock()
			c.w.reqs = append(c.w.reqs, request{op, string(b[16 : 16+n])})
			close(c.w.changed)
			c.w.changed = make(chan struct{})
			c.w.mu.Unlock()
		}
	}
	return c.Conn.Write(b)
}

func (c *wireConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.w.mu.Lock()
	hold := c.w.hold
	c.w.mu.Unlock()
	if hold != nil {
		<-hold
	}
	return n, err
}

// Issue 14 item 2: an Enter cancelled while its member create is under way
// must not leave a member node behind. Here the barrier path does not exist
// yet, so the create is two steps (a create that finds no parent, then the
// parents and the create again); Enter is cancelled while the first step's
// reply is held. The clean-up must wait for the create's real outcome:
// deleting at once, before the second step lands, left an orphan member
// that counted for ever (it let a single real member pass a 2-member
// barrier).
func TestDoubleBarrierCancelledEnterLeavesNoMember(t *testing.T) {
	t.Parallel()
	path := barrierPath(t)
	w := newWire()
	c := newClient(t, testenv.Shared().ConnectString(), framework.WithDialer(w.dialer), framework.WithSessionTimeout(20*time.Second))
	d := newDouble(t, c, path, 2)

	release := w.holdReplies(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := async(func() error { return d.Enter(ctx) })
	creates := []int32{opCreate, opCreate2, opCreateContainer}
	if !w.await(testenv.WaitShort, 1, path, creates...) {
		t.Fatal("the member create was never sent")
	}
	cancel()
	if err := receive(t, done, testenv.WaitShort, "cancelled Enter"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Enter: %v, want context.Canceled", err)
	}
	// A clean-up that does not wait for the create's outcome sends its
	// delete now, at once; give it the time to (it must not: the reply it
	// would need is held).
	early := w.await(2*time.Second, 1, path, opDelete)
	release()
	if early {
		t.Errorf("the cancelled Enter's clean-up sent its delete before it knew the create's outcome")
	}
	// The create's second step, then a round trip after it: the server has
	// done it, and the client has its reply.
	if !w.await(testenv.WaitShort, 2, path, creates...) {
		t.Fatal("the create's second step was never sent")
	}
	if _, _, err := c.Exists(testenv.Ctx(t, testenv.WaitShort), path); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitBackground(testenv.Ctx(t, testenv.WaitShort)); err != nil {
		t.Fatal(err)
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("a cancelled Enter left %v (its clean-up delete went first: %v)", kids, early)
	}
}

// Issue 14 item 2: Leave deletes the ready node only if it is still the one
// of its round. Here, between Leave's read of the ready node and its
// delete, the round's ready node is deleted (as another member of the
// round does) and the next round makes its own: that one must survive.
// Also when the barrier node, a container emptied so, was reaped and made
// again meanwhile: its data version then counts from 0 again, and the next
// round's ready node has the version of ours.
func TestDoubleBarrierLeaveReadyRace(t *testing.T) {
	t.Parallel()
	for _, reaped := range []bool{false, true} {
		t.Run(fmt.Sprintf("reaped=%v", reaped), func(t *testing.T) {
			path := barrierPath(t)
			ready := framework.JoinPath(path, "ready")
			c := newClient(t, testenv.Shared().ConnectString())
			ctx := testenv.Ctx(t, testenv.WaitShort)
			old := newDouble(t, c, path, 1)
			next := newDouble(t, newClient(t, testenv.Shared().ConnectString()), path, 1)
			if err := old.Enter(ctx); err != nil {
				t.Fatal(err)
			}
			var nextReady int64
			barrier.SetDeleteReadyHook(old, func() {
				if err := c.Delete(ctx, ready); err != nil { // as another member of the round does
					t.Error(err)
				}
				if reaped { // as the server then reaps the emptied container
					if err := c.Delete(ctx, path); err != nil {
						t.Error(err)
					}
				}
				if err := next.Enter(ctx); err != nil {
					t.Error(err)
				}
				if _, st, err := c.Exists(ctx, ready); err == nil && st != nil {
					nextReady = st.Czxid
				}
			})
			if err := old.Leave(ctx); err != nil {
				t.Fatal(err)
			}
			if nextReady == 0 {
				t.Fatal("the next round made no ready node")
			}
			if _, st, err := c.Exists(ctx, ready); err != nil || st == nil || st.Czxid != nextReady {
				t.Fatalf("the next round's ready node was deleted by the old round's Leave (%v)", err)
			}
			if err := next.Leave(ctx); err != nil {
				t.Fatal(err)
			}
			if kids := testenv.Children(t, c, path); len(kids) != 0 {
				t.Errorf("left behind: %v", kids)
			}
		})
	}
}
