package driver_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// The mutex's shortcuts (the handoff and its marks, the parent reads
// behind a create: handoff.go, driver.go)
// under attack (issue 38, 2.): our contenders, two drivers on each of
// three sessions, queue with foreign contenders named as Curator names
// them (_c_<uuid>-lock-, one UUID made again and again, as a create
// retried after a session loss does), as go-zookeeper's Lock does
// (_c_<32 hex>-lock-) and plainly (lock-), which hold a moment once first
// and give up at random; an operator deletes nodes at random, ours waiting
// and holding among them; and the lock path, a container checked every
// 100 ms, is reaped whenever the queue empties and made again, its
// sequences from 0, so that names recur. Each of our acquisitions is
// checked on the server at once: our node is first in line (or gone, an
// operator's delete). No waiter may be stuck: every Acquire has a
// deadline.
func TestAdversarialMutex(t *testing.T) {
	srv, err := zktest.NewServer(zktest.WithJVMProperty("znode.container.checkIntervalMs", "100"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := "/adversarial/lock"
	f, op := testenv.Client(t, srv.Addr()), testenv.Client(t, srv.Addr())
	const rounds, perRound = 5, 5
	var acquired, vanished atomic.Int32
	seen := map[int64]bool{} // the lock path's incarnations seen
	var ds []*driver.Driver
	var cs []*framework.Client
	for range 3 {
		c := testenv.Client(t, srv.Addr())
		for range 2 {
			ds, cs = append(ds, newDriver(t, c, path)), append(cs, c)
		}
	}
	recurring := framework.NewProtectedID()
	names := []func() string{
		func() string { return framework.ProtectedName(recurring, "lock-") },
		func() string { return framework.ProtectedName(framework.NewProtectedID(), "lock-") },
		func() string { b := make([]byte, 16); rand.Read(b); return "_c_" + hex.EncodeToString(b) + "-lock-" },
		func() string { return "lock-" },
	}
	for range rounds {
		stop := make(chan struct{})
		var wg, bg sync.WaitGroup
		bg.Add(2)
		go func() { // foreign contenders
			defer bg.Done()
			tick := time.NewTicker(2 * time.Millisecond) // a pace, not a wait
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				n, err := f.CreateNode(ctx, framework.JoinPath(path, names[i%len(names)]()), nil,
					framework.WithMode(framework.ModeEphemeralSequential), framework.WithParentContainers())
				if err != nil {
					t.Errorf("foreign create: %v", err)
					return
				}
				if mrand.IntN(2) == 0 { // wait until first (a hold), else give up at once
					for deadline := time.Now().Add(testenv.WaitShort); ; <-tick.C {
						first, err := testenv.First(f, path)
						if err != nil || first == n.Path || first == "" {
							break
						}
						if time.Now().After(deadline) {
							t.Errorf("foreign contender %s never first: a waiter of ours stuck before it?", n.Path)
							return
						}
					}
				}
				if err := f.Delete(ctx, n.Path); err != nil && !errors.Is(err, zk.ErrNoNode) {
					t.Errorf("foreign delete: %v", err)
					return
				}
			}
		}()
		go func() { // the operator
			defer bg.Done()
			tick := time.NewTicker(5 * time.Millisecond) // a pace, not a wait
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				kids, _, err := op.Children(ctx, path)
				if errors.Is(err, zk.ErrNoNode) || len(kids) == 0 {
					continue
				}
				if err != nil {
					t.Errorf("operator: %v", err)
					return
				}
				switch mrand.IntN(40) {
				case 0: // all of them, mid-queue
					for _, k := range kids {
						op.Delete(ctx, framework.JoinPath(path, k))
					}
				case 1, 2, 3, 4, 5, 6, 7, 8, 9:
					op.Delete(ctx, framework.JoinPath(path, kids[mrand.IntN(len(kids))]))
				}
			}
		}()
		for i, d := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perRound {
					if err := acquireOnce(ctx, cs[i], d); err != nil {
						if !errors.Is(err, curator.ErrNodeVanished) {
							t.Error(err)
							return
						}
						vanished.Add(1)
						continue
					}
					acquired.Add(1)
				}
			}()
		}
		wg.Wait()
		close(stop)
		bg.Wait()
		if t.Failed() {
			return
		}
		// The path reaped before the next round makes it again, its
		// sequences from 0: names recur, and every driver's gap reading and
		// mark are of the last incarnation.
		testenv.Eventually(t, testenv.WaitShort, "the lock path reaped", func() error {
			ok, st, err := op.Exists(ctx, path)
			if err == nil && ok {
				seen[st.Czxid] = true
				err = errors.New("still there")
			}
			return err
		})
	}
	t.Logf("%d acquisitions checked, %d attempts whose node an operator deleted, %d incarnations of the lock path",
		acquired.Load(), vanished.Load(), len(seen))
	if acquired.Load() < int32(len(ds)*rounds*perRound/2) {
		t.Errorf("only %d of %d attempts acquired: the attack drowned the test", acquired.Load(), len(ds)*rounds*perRound)
	}
}

// acquireOnce acquires d's lock within a deadline (a waiter stuck fails),
// checks on the server that our node is first in line (or gone: an
// operator deleted it), and releases.
func acquireOnce(ctx context.Context, c *framework.Client, d *driver.Driver) error {
	actx, cancel := context.WithTimeout(ctx, testenv.WaitShort)
	defer cancel()
	ct, err := d.Acquire(actx, nil, &driver.WaitOptions{})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("a waiter stuck: %w", err)
	}
	if err != nil {
		return err
	}
	defer ct.Delete(ctx)
	if err := testenv.IsFirst(c, ct.Node()); err != nil {
		if ok, _, xerr := c.Exists(ctx, ct.Node()); xerr == nil && !ok {
			return nil // an operator deleted it meanwhile: a holding lost, not two holders
		}
		return fmt.Errorf("two holders: %w", err)
	}
	return nil
}
