package interop_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/recipes/semaphore"
)

var seq atomic.Int64

func path(t *testing.T) string { return fmt.Sprintf("/interop/%s-%d", t.Name(), seq.Add(1)) }

// Mutual exclusion and participants both ways: Curator holds, gocurator
// waits; gocurator holds, Curator waits.
func TestInteropMutex(t *testing.T) {
	java := startPeer(t)
	c := newClient(t)
	p := path(t)
	ctx := ctxFor(t, 2*time.Minute)
	java.must("mutex-acquire " + p + " 10000")
	m, _ := locks.NewMutex(c, p)
	if err := m.TryLock(ctx); !errors.Is(err, locks.ErrLocked) {
		t.Fatalf("Go TryLock while Curator holds: %v", err)
	}
	got := make(chan error, 1)
	go func() { got <- m.Lock(ctx) }()
	var parts []string
	for deadline := time.Now().Add(20 * time.Second); len(parts) != 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Go participants never showed both: %v", parts)
		}
		parts, _ = m.Participants(ctx)
	}
	javaParts := strings.Split(java.must("participants "+p), ",")
	if len(javaParts) != 2 || javaParts[0] != parts[0] || javaParts[1] != parts[1] {
		t.Fatalf("participants differ: Curator %v, gocurator %v", javaParts, parts)
	}
	stillWaiting(t, got, 300*time.Millisecond, "Go Lock while Curator holds")
	java.must("mutex-release " + p)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// Now Curator waits for us.
	ans := java.send("mutex-acquire " + p + " 20000")
	stillWaiting(t, ans, 300*time.Millisecond, "Curator acquire while Go holds")
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-ans; a != "ok" {
		t.Fatalf("Curator acquire after Go released: %s", a)
	}
	java.must("mutex-release " + p)
}

// Queue order is respected across languages: a Curator waiter queued before
// a gocurator waiter gets the lock first, and the other way round.
func TestInteropQueueOrder(t *testing.T) {
	java := startPeer(t)
	c1, c2 := newClient(t), newClient(t)
	p := path(t)
	ctx := ctxFor(t, 2*time.Minute)
	holder, _ := locks.NewMutex(c1, p)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	ans := java.send("mutex-acquire " + p + " 30000")
	waitParts := func(n int) {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if parts, _ := holder.Participants(ctx); len(parts) == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("never %d participants", n)
			}
		}
	}
	waitParts(2)
	goWaiter, _ := locks.NewMutex(c2, p)
	got := make(chan error, 1)
	go func() { got <- goWaiter.Lock(ctx) }()
	waitParts(3)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-ans; a != "ok" {
		t.Fatalf("Curator, queued first, did not get it first: %s", a)
	}
	stillWaiting(t, got, 300*time.Millisecond, "Go waiter queued after Curator")
	java.must("mutex-release " + p)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	goWaiter.Unlock(ctx)
}

// Read-write lock: readers of both languages share; a Curator writer waits
// for them, and a gocurator reader queued after that writer waits for it.
func TestInteropReadWrite(t *testing.T) {
	javaR, javaW := startPeer(t), startPeer(t)
	c := newClient(t)
	p := path(t)
	ctx := ctxFor(t, 2*time.Minute)
	javaR.must("read-acquire " + p + " 10000")
	goR, _ := locks.NewReadWriteLock(c, p)
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := goR.Read().Lock(tctx); err != nil {
		t.Fatalf("Go reader beside a Curator reader: %v", err)
	}
	w := javaW.send("write-acquire " + p + " 30000")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if parts, _ := goR.Read().Participants(ctx); len(parts) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Curator writer never queued")
		}
	}
	stillWaiting(t, w, 300*time.Millisecond, "Curator writer while readers hold")
	late, _ := locks.NewReadWriteLock(c, p)
	short, cancel2 := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel2()
	if err := late.Read().Lock(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Go reader queued after a Curator writer: %v", err)
	}
	javaR.must("read-release " + p)
	if err := goR.Read().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-w; a != "ok" {
		t.Fatalf("Curator writer: %s", a)
	}
	goW, _ := locks.NewReadWriteLock(c, p)
	if err := goW.Write().TryLock(ctx); !errors.Is(err, locks.ErrLocked) {
		t.Fatalf("Go writer while Curator writes: %v", err)
	}
	javaW.must("write-release " + p)
}

// Semaphore: leases of both languages count together.
func TestInteropSemaphore(t *testing.T) {
	java := startPeer(t)
	c := newClient(t)
	p := path(t)
	ctx := ctxFor(t, 2*time.Minute)
	javaLease := java.must("sem-acquire " + p + " 2 10000")
	s, _ := semaphore.New(c, p, 2)
	l, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TryAcquire(ctx); !errors.Is(err, semaphore.ErrNoLease) {
		t.Fatalf("third lease (Go): %v", err)
	}
	if a := java.do("sem-acquire " + p + " 2 500"); a != "timeout" {
		t.Fatalf("third lease (Curator): %s", a)
	}
	parts, _ := s.Participants(ctx)
	if len(parts) != 2 || !strings.HasSuffix(parts[0], javaLease) && !strings.HasSuffix(parts[1], javaLease) {
		t.Fatalf("participants %v do not show Curator's lease %s", parts, javaLease)
	}
	ans := java.send("sem-acquire " + p + " 2 20000")
	stillWaiting(t, ans, 300*time.Millisecond, "Curator third lease")
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-ans; !strings.HasPrefix(a, "ok") {
		t.Fatalf("Curator lease after Go returned one: %s", a)
	}
	m, _ := semaphore.NewMutex(c, p+"-mutex")
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if a := java.do("sem-acquire " + p + "-mutex 1 500"); a != "timeout" {
		t.Fatalf("Curator semaphore mutex while Go holds: %s", a)
	}
	m.Unlock(ctx)
	java.must("sem-acquire " + p + "-mutex 1 10000")
	if err := m.TryLock(ctx); !errors.Is(err, locks.ErrLocked) {
		t.Fatalf("Go semaphore mutex while Curator holds: %v", err)
	}
}

// Barriers release both sides.
func TestInteropBarriers(t *testing.T) {
	java := startPeer(t)
	c := newClient(t)
	p := path(t)
	ctx := ctxFor(t, 2*time.Minute)
	b, _ := barrier.NewBarrier(c, p)
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	ans := java.send("barrier-wait " + p + " 20000")
	stillWaiting(t, ans, 300*time.Millisecond, "Curator waiting on Go's barrier")
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if a := <-ans; a != "ok" {
		t.Fatalf("Curator barrier wait: %s", a)
	}
	java.must("barrier-set " + p)
	got := make(chan error, 1)
	go func() { got <- b.Wait(ctx) }()
	stillWaiting(t, got, 300*time.Millisecond, "Go waiting on Curator's barrier")
	java.must("barrier-remove " + p)
	if err := <-got; err != nil {
		t.Fatal(err)
	}

	// Double barrier: two Curator members and two gocurator members.
	dp := p + "-double"
	j1, j2 := java, startPeer(t)
	e1, e2 := j1.send("dbarrier-enter "+dp+" 4 30000"), j2.send("dbarrier-enter "+dp+" 4 30000")
	errs := make(chan error, 2)
	var gos []*barrier.DoubleBarrier
	for i := 0; i < 2; i++ {
		db, err := barrier.NewDoubleBarrier(newClient(t), dp, 4)
		if err != nil {
			t.Fatal(err)
		}
		gos = append(gos, db)
		go func() { errs <- db.Enter(ctx) }()
	}
	for _, ch := range []<-chan string{e1, e2} {
		if a := <-ch; a != "ok" {
			t.Fatalf("Curator enter: %s", a)
		}
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("Go enter: %v", err)
		}
	}
	l1, l2 := j1.send("dbarrier-leave "+dp+" 4 30000"), j2.send("dbarrier-leave "+dp+" 4 30000")
	for _, db := range gos {
		go func() { errs <- db.Leave(ctx) }()
	}
	for _, ch := range []<-chan string{l1, l2} {
		if a := <-ch; a != "ok" {
			t.Fatalf("Curator leave: %s", a)
		}
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("Go leave: %v", err)
		}
	}
	kids, _, err := c.Children(ctx, dp)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	for _, k := range kids {
		if k != barrier.ReadyNode {
			t.Errorf("member node %s left after every member left", k)
		}
	}
}
