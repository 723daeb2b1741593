package driver_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// Issue 38, 1: a late record of a name's going must not count for the
// same name on a path reaped and made again. Names recur: the lock path,
// a container, is reaped at the server's next container check once empty
// (100 ms here), made again with its sequence numbers back at 0, and a
// foreign client whose protected create keeps its UUID (as one retried
// after a session loss does, CURATOR-498) makes the same name again.
//
// Sessions A and B of this process use one lock path; B's traffic runs
// behind (held by the fault proxy, or its server SIGSTOPped). X1 holds, B
// waits on it; B's node and X1 go; the path is reaped and made again; X2
// of the same name holds; Y and then A queue behind it. B's late
// NodeDeleted for X1 is recorded after A's reading was sent. When Y
// leaves, A must not count X2 gone: it reads the queue again and waits on
// X2 (handoff.go, 3.). When the process's sessions shared their records
// and a record was a name alone, A held beside X2; a record now names one
// node (the path's czxid and the name) and is its client's alone: either
// suffices.
func TestHandoffLateRecordOfAReapedPath(t *testing.T) {
	opts := []zktest.Option{
		zktest.WithJVMProperty("znode.container.checkIntervalMs", "100"),
		zktest.WithConfig("maxSessionTimeout", "20000"),
	}
	t.Run("proxy", func(t *testing.T) {
		srv, err := zktest.NewServer(opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		px := zktest.StartProxy(t, srv.Addr())
		b := testenv.Client(t, px.Addr(), framework.WithSessionTimeout(12*time.Second))
		lateRecordScene(t, srv.Addr(), b, func(ctx context.Context) (resume func()) {
			h := px.HoldReply(zktest.OpExists)
			go b.Exists(ctx, "/") // its reply, and every event behind it, held
			if err := h.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			return h.Release
		})
	})
	t.Run("paused member", func(t *testing.T) {
		cl := zktest.StartCluster(t, 3, opts...)
		leader, err := cl.Leader()
		if err != nil {
			t.Fatal(err)
		}
		follower := cl.Members()[(leader+1)%3]
		b := testenv.Client(t, follower.Addr(), framework.WithSessionTimeout(12*time.Second))
		lateRecordScene(t, cl.Members()[leader].Addr(), b, func(context.Context) (resume func()) {
			pid := follower.Pid()
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			resumed := false
			cont := func() {
				if !resumed {
					resumed = true
					syscall.Kill(pid, syscall.SIGCONT)
				}
			}
			t.Cleanup(cont)
			return cont
		})
	})
}

// lateRecordScene plays the scene of TestHandoffLateRecordOfAReapedPath:
// A and the foreign clients connect to addr, b is B's client, and lag
// makes B's traffic lag until the returned func is called.
func lateRecordScene(t *testing.T, addr string, b *framework.Client, lag func(ctx context.Context) (resume func())) {
	pk := countParks(t)
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := "/reaped/lock"
	a, f := testenv.Client(t, addr), testenv.Client(t, addr)
	u := framework.NewProtectedID()
	foreign := func(id string) string { // a foreign contender: protected, ephemeral-sequential
		t.Helper()
		n, err := f.CreateNode(ctx, framework.JoinPath(path, framework.ProtectedName(id, "lock-")), nil,
			framework.WithMode(framework.ModeEphemeralSequential), framework.WithParentContainers())
		if err != nil {
			t.Fatal(err)
		}
		return n.Path
	}
	x1 := foreign(u)
	bNode, bDone := pk.enqueueParked(t, ctx, newDriver(t, b, path), "b waiting on x1")

	resume := lag(ctx)
	for _, n := range []string{bNode.Node(), x1} { // b's node first: b must not hold on x1's going
		if err := f.Delete(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, testenv.WaitShort, "the lock path reaped", func() error {
		ok, _, err := f.Exists(ctx, path)
		if err == nil && ok {
			err = errors.New("still there")
		}
		return err
	})
	x2 := foreign(u)
	if x2 != x1 {
		t.Fatalf("x2 is %s, x1 was %s: the scene needs the name to recur", x2, x1)
	}
	y := foreign(framework.NewProtectedID())
	da := newDriver(t, a, path)
	aNode, aDone := pk.enqueueParked(t, ctx, da, "a waiting on y")
	defer aNode.Delete(ctx)

	resume()
	if err := testenv.Recv(t, bDone, testenv.WaitLong, "b's wait to end"); !errors.Is(err, curator.ErrNodeVanished) {
		t.Fatalf("b, its node deleted: %v, want ErrNodeVanished", err)
	}
	// b's waiter saw x1's NodeDeleted (it then found its own node gone):
	// its late record is made.
	if err := f.Delete(ctx, y); err != nil { // y gives up
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "a to wait again, or to hold", func() bool { return pk.of(aNode) >= 2 || len(aDone) > 0 })
	select {
	case err := <-aDone:
		t.Fatalf("a holds (%v) while x2 (%s) holds: a late record of the name's going on the path's last incarnation was believed", err, x2)
	default:
	}
	if err := f.Delete(ctx, x2); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, aDone, testenv.WaitShort, "a to hold once x2 went"); err != nil {
		t.Fatal(err)
	}
}
