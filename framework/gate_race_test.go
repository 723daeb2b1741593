package framework_test

import (
	"sync"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// go-zookeeper/zk#35 on real connections: a client keeps a watch through
// reconnections while requests queued in go-zookeeper during each
// disconnection are written first on the next connection, before its
// SetWatches, so their replies wait at the read gate. Every request is
// answered and the watch stays set. The race itself needs go-zookeeper's
// loop goroutine to reach its SetWatches a round trip late, which no hook
// of ours can force: the gate's ordering is proved by TestGateHolds...
// (gate_test.go), and the race detector (the suite runs with -race)
// watches this test.
func TestReconnectionsWithKeptWatchesRaceFree(t *testing.T) {
	px := startProxyFor(t)
	root := testenv.Uniq("gate")
	full := "/" + root + "/w"
	c := newClient(t, px.Addr(), framework.WithNamespace(root))
	ctx := testenv.Ctx(t, testenv.WaitLong)
	if _, err := c.Create(ctx, "/w", nil); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW(ctx, "/w") // kept: go-zookeeper sets it again on each connection
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for range 5 {
		px.Refuse(true)
		px.Drop()
		testenv.WaitFor(t, testenv.WaitLong, "disconnected", func() bool { return !c.Connected() })
		zc := framework.ZKConn(c)
		var wg sync.WaitGroup
		for range 4 { // requests queued in go-zookeeper, written first on the next connection
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, _, err := zc.Exists(full); err != nil {
					t.Error(err)
				}
			}()
		}
		px.Refuse(false)
		wg.Wait()
	}
	select {
	case ev := <-w.C():
		t.Fatalf("the kept watch fired: %v", ev)
	default:
	}
}
