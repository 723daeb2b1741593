package atomic_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/locks"
)

// Curator's testBasic, testCompareAndSetWithFreshInstance and
// testForceSet: every operation of a Long, and its 8 bytes big-endian.
func TestLongOperations(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := atomicPath(t) + "/deep/counter"
	l := newLong(t, c, path)
	want := func(what string, r atomic.Result[int64], err error, ok bool, pre, post int64) {
		t.Helper()
		if err != nil || r.Succeeded != ok || r.PreValue != pre || r.PostValue != post {
			t.Fatalf("%s: %+v %v, want succeeded %v pre %d post %d", what, r, err, ok, pre, post)
		}
	}
	r, err := l.Get(ctx)
	want("Get of a missing node", r, err, true, 0, 0)
	r, err = l.CompareAndSet(ctx, 0, 1)
	want("CompareAndSet on a missing node", r, err, false, 0, 0)
	if ok, err := l.Initialize(ctx, 0); !ok || err != nil {
		t.Fatalf("Initialize: %v %v", ok, err)
	}
	r, err = l.CompareAndSet(ctx, 0, 1)
	want("CompareAndSet(0, 1)", r, err, true, 0, 1)
	if ok, err := l.Initialize(ctx, 5); ok || err != nil {
		t.Fatalf("Initialize of an existing node: %v %v, want false", ok, err)
	}
	r, err = l.CompareAndSet(ctx, 7, 8)
	want("CompareAndSet(7, 8) on 1", r, err, false, 1, 0)
	r, err = l.Increment(ctx)
	want("Increment", r, err, true, 1, 2)
	if r.Stats.OptimisticTries != 1 || r.Stats.PromotedTries != 0 {
		t.Fatalf("stats of an uncontended Increment: %+v", r.Stats)
	}
	r, err = l.Add(ctx, 10)
	want("Add(10)", r, err, true, 2, 12)
	r, err = l.Subtract(ctx, 3)
	want("Subtract(3)", r, err, true, 12, 9)
	r, err = l.Decrement(ctx)
	want("Decrement", r, err, true, 9, 8)
	r, err = l.TrySet(ctx, -2)
	want("TrySet(-2)", r, err, true, 8, -2)
	if err := l.ForceSet(ctx, 258); err != nil {
		t.Fatal(err)
	}
	raw, _, err := c.Get(ctx, path)
	if err != nil || !bytes.Equal(raw, []byte{0, 0, 0, 0, 0, 0, 1, 2}) {
		t.Fatalf("258 stored as %x %v, want 8 bytes big-endian", raw, err)
	}
	r, err = l.Add(ctx, 1<<62)
	want("Add(1<<62)", r, err, true, 258, 258+1<<62)
	r, err = l.Add(ctx, 1<<62) // wraps, as Java's
	want("Add past MaxInt64", r, err, true, 258+1<<62, -1<<63+258)

	// ForceSet makes a missing node (and its parents).
	fresh := newLong(t, c, atomicPath(t)+"/a/b")
	if err := fresh.ForceSet(ctx, 3); err != nil {
		t.Fatal(err)
	}
	r, err = fresh.Get(ctx)
	want("Get after ForceSet on a missing node", r, err, true, 3, 3)
	// Increment makes a missing node at the delta.
	made := newLong(t, c, atomicPath(t)+"/c/d")
	r, err = made.Increment(ctx)
	want("Increment of a missing node", r, err, true, 0, 1)
}

// Int: 4 bytes big-endian.
func TestIntOperations(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := atomicPath(t)
	n, err := atomic.NewInt(c, path)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := n.Add(ctx, 258); err != nil || !r.Succeeded || r.PostValue != 258 {
		t.Fatalf("Add(258): %+v %v", r, err)
	}
	raw, _, err := c.Get(ctx, path)
	if err != nil || !bytes.Equal(raw, []byte{0, 0, 1, 2}) {
		t.Fatalf("258 stored as %x %v, want 4 bytes big-endian", raw, err)
	}
	if r, err := n.Subtract(ctx, 259); err != nil || r.PostValue != -1 {
		t.Fatalf("Subtract(259): %+v %v", r, err)
	}
	if r, err := n.CompareAndSet(ctx, -1, 1<<31-1); err != nil || !r.Succeeded {
		t.Fatalf("CompareAndSet(-1, max): %+v %v", r, err)
	}
	if r, err := n.Increment(ctx); err != nil || r.PostValue != -1<<31 {
		t.Fatalf("Increment of MaxInt32: %+v %v, want it to wrap", r, err)
	}
}

// Value: raw bytes, and a CompareAndSet that compares them.
func TestValueOperations(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	v, err := atomic.NewValue(c, atomicPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := v.Get(ctx); err != nil || !r.Succeeded || r.PreValue != nil {
		t.Fatalf("Get of a missing node: %+v %v, want nil", r, err)
	}
	if r, err := v.TrySet(ctx, []byte("a")); err != nil || !r.Succeeded || string(r.PostValue) != "a" || r.PreValue != nil {
		t.Fatalf("TrySet: %+v %v", r, err)
	}
	if r, err := v.CompareAndSet(ctx, []byte("b"), []byte("c")); err != nil || r.Succeeded || string(r.PreValue) != "a" {
		t.Fatalf("CompareAndSet with the wrong bytes: %+v %v", r, err)
	}
	if r, err := v.CompareAndSet(ctx, []byte("a"), []byte("c")); err != nil || !r.Succeeded || string(r.PostValue) != "c" {
		t.Fatalf("CompareAndSet: %+v %v", r, err)
	}
	if r, err := v.Get(ctx); err != nil || string(r.PreValue) != "c" || string(r.PostValue) != "c" {
		t.Fatalf("Get: %+v %v", r, err)
	}
}

// Curator's testCorruptedValue: data shorter than the width is
// ErrCorrupt, and nothing is written; longer data is read by its first
// bytes; empty data is 0.
func TestCorruptValue(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := atomicPath(t)
	if _, err := c.Create(ctx, path, []byte("foo"), framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}
	l := newLong(t, c, path)
	if _, err := l.Get(ctx); !errors.Is(err, curator.ErrCorrupt) {
		t.Fatalf("Get of \"foo\": %v, want ErrCorrupt", err)
	}
	if r, err := l.Increment(ctx); !errors.Is(err, curator.ErrCorrupt) || r.Succeeded {
		t.Fatalf("Increment of \"foo\": %+v %v, want ErrCorrupt", r, err)
	}
	if raw, st, err := c.Get(ctx, path); err != nil || string(raw) != "foo" || st.Version != 0 {
		t.Fatalf("node after a refused Increment: %q %v", raw, err)
	}
	if _, err := c.Set(ctx, path, []byte{0, 0, 0, 0, 0, 0, 0, 5, 0xff}); err != nil {
		t.Fatal(err)
	}
	if r, err := l.Increment(ctx); err != nil || r.PreValue != 5 || r.PostValue != 6 {
		t.Fatalf("Increment of 9 bytes: %+v %v, want 5 -> 6", r, err)
	}
	if _, err := c.Set(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	if r, err := l.Increment(ctx); err != nil || r.PreValue != 0 || r.PostValue != 1 {
		t.Fatalf("Increment of empty data: %+v %v, want 0 -> 1", r, err)
	}
}

// Bad input: typed errors before any I/O.
func TestBadInput(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	long := func(c *framework.Client, path string, opts ...atomic.Option) error {
		_, err := atomic.NewLong(c, path, opts...)
		return err
	}
	l := newLong(t, c, atomicPath(t))
	var nilCtx context.Context
	_, errCtx := l.Increment(nilCtx)
	_, errInit := l.Initialize(nilCtx, 1)
	for name, err := range map[string]error{
		"nil client":             long(nil, "/n"),
		"relative path":          long(c, "n"),
		"root":                   long(c, "/"),
		"nil policy":             long(c, "/n", atomic.WithRetryPolicy(nil)),
		"bad lock path":          long(c, "/n", atomic.WithPromotedToLock("l")),
		"root lock path":         long(c, "/n", atomic.WithPromotedToLock("/")),
		"timeout without lock":   long(c, "/n", atomic.WithPromotedTimeout(time.Second)),
		"policy without lock":    long(c, "/n", atomic.WithPromotedRetryPolicy(noRetry(t))),
		"zero timeout":           long(c, "/n", atomic.WithPromotedToLock("/l"), atomic.WithPromotedTimeout(0)),
		"nil promoted policy":    long(c, "/n", atomic.WithPromotedToLock("/l"), atomic.WithPromotedRetryPolicy(nil)),
		"nil context":            errCtx,
		"nil context Initialize": errInit,
	} {
		if !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, _, err := c.Get(ctx, l.Path()); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("refused calls made the node: %v", err)
	}
}

// Checklist 7.4 item 3 (Curator's testSimulation): several sessions,
// several goroutines each, increments all applied exactly once, and the
// conflicts counted in the stats.
func TestConcurrentIncrements(t *testing.T) {
	const sessions, goroutines, each = 4, 3, 15
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	path := atomicPath(t)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		tries     int
		succeeded int
	)
	for range sessions {
		l := newLong(t, testenv.Client(t, testenv.Shared().ConnectString()), path, patient(t))
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					r, err := l.Increment(ctx)
					if err != nil || !r.Succeeded || r.PostValue != r.PreValue+1 {
						t.Errorf("Increment: %+v %v", r, err)
						return
					}
					mu.Lock()
					tries += r.Stats.OptimisticTries
					succeeded++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	r, err := newLong(t, testenv.Client(t, testenv.Shared().ConnectString()), path).Get(ctx)
	if err != nil || r.PreValue != int64(succeeded) || succeeded != sessions*goroutines*each {
		t.Fatalf("counter %d %v after %d increments, want %d", r.PreValue, err, succeeded, sessions*goroutines*each)
	}
	t.Logf("%d increments in %d optimistic tries", succeeded, tries)
	if tries <= succeeded {
		t.Errorf("no conflict among %d concurrent writers: %d tries", sessions*goroutines, tries)
	}
}

// Curator's testSimulation with PromotedToLock: with no optimistic retry,
// contended increments are promoted to the lock; all are applied once,
// and both kinds of tries happen.
func TestPromotedIncrements(t *testing.T) {
	const sessions, goroutines, each = 3, 3, 10
	ctx := testenv.Ctx(t, 2*testenv.WaitLong)
	path, lockPath := atomicPath(t), atomicPath(t)+"-lock"
	var (
		wg                sync.WaitGroup
		mu                sync.Mutex
		promoted, applied int
	)
	for range sessions {
		l := newLong(t, testenv.Client(t, testenv.Shared().ConnectString()), path,
			atomic.WithRetryPolicy(noRetry(t)), atomic.WithPromotedToLock(lockPath),
			atomic.WithPromotedRetryPolicy(patientPolicy(t)), atomic.WithPromotedTimeout(time.Minute))
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					r, err := l.Increment(ctx)
					if err != nil || !r.Succeeded {
						t.Errorf("Increment: %+v %v", r, err)
						return
					}
					mu.Lock()
					applied++
					promoted += r.Stats.PromotedTries
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	r, err := newLong(t, testenv.Client(t, testenv.Shared().ConnectString()), path).Get(ctx)
	if err != nil || r.PreValue != int64(applied) || applied != sessions*goroutines*each {
		t.Fatalf("counter %d %v after %d increments", r.PreValue, err, applied)
	}
	if promoted == 0 {
		t.Fatal("no promoted try among contended writers with no optimistic retry")
	}
	if kids := testenv.Children(t, testenv.Client(t, testenv.Shared().ConnectString()), lockPath); len(kids) != 0 {
		t.Fatalf("lock nodes left: %v", kids)
	}
}

// A promoted operation waits for the lock WithPromotedTimeout at most,
// then fails with ErrContention, having written nothing; once the lock is
// free it is applied under it.
func TestPromotedTimeout(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path, lockPath := atomicPath(t), atomicPath(t)+"-lock"
	l := newLong(t, c, path, atomic.WithRetryPolicy(noRetry(t)), atomic.WithPromotedToLock(lockPath),
		atomic.WithPromotedTimeout(200*time.Millisecond))
	if ok, err := l.Initialize(ctx, 10); !ok || err != nil {
		t.Fatal(ok, err)
	}
	holder, err := locks.NewMutex(other, lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// Every optimistic try loses: another writer writes first.
	interfere := func(string) {
		if _, err := other.Set(ctx, path, []byte{0, 0, 0, 0, 0, 0, 0, 10}); err != nil {
			t.Error(err)
		}
	}
	atomic.SetWriteHook(interfere)
	t.Cleanup(func() { atomic.SetWriteHook(nil) })
	r, err := l.Increment(ctx)
	if !errors.Is(err, curator.ErrContention) || r.Succeeded || r.Stats.OptimisticTries != 1 || r.Stats.PromotedTries != 0 || r.Stats.PromotedTime < 200*time.Millisecond {
		t.Fatalf("Increment with the lock held elsewhere: %+v %v, want ErrContention after the timeout", r, err)
	}
	atomic.SetWriteHook(nil)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	first := true
	atomic.SetWriteHook(func(p string) { // the optimistic try loses, the promoted one wins
		if first {
			first = false
			interfere(p)
		}
	})
	r, err = l.Increment(ctx)
	atomic.SetWriteHook(nil)
	if err != nil || !r.Succeeded || r.PostValue != 11 || r.Stats.PromotedTries != 1 {
		t.Fatalf("promoted Increment: %+v %v, want 10 -> 11 in one promoted try", r, err)
	}
}
