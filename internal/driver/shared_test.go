package driver_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// Waiters of one client and path share getChildren reads: many concurrent
// waiters make far fewer reads than there are waiters, and nothing of the
// sharing stays behind once they are done.
func TestSharedReadsCoalesce(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	d := newDriver(t, c, testenv.Path(t, "/driver"))
	holder, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	waiters := make([]*driver.Contender, n)
	for i := range waiters {
		if waiters[i], err = d.Enqueue(ctx, nil); err != nil {
			t.Fatal(err)
		}
		driver.Unlisted(waiters[i])
	}
	px.ResetCounts()
	// Each waiter decides once (its predecessor holds) and then waits:
	// Try makes it return after that one decision.
	var wg sync.WaitGroup
	for _, w := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Wait(ctx, &driver.WaitOptions{Try: true}); !errors.Is(err, curator.ErrLocked) {
				t.Errorf("Try of a waiter: %v, want ErrLocked", err)
			}
		}()
	}
	wg.Wait()
	reads := queueReads(px)
	if reads == 0 || reads >= n {
		t.Errorf("%d waiters made %d getChildren reads, want between 1 and %d", n, reads, n-1)
	}
	t.Logf("%d waiters, %d reads", n, reads)
	if k := driver.SharedReadKeys(); k != 0 {
		t.Errorf("%d shared-read keys left behind", k)
	}
	for _, ct := range append(waiters, holder) {
		if err := ct.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A caller never gets a read sent before its call: while a read is in
// flight (its reply held by the proxy) the holder's node is deleted, and a
// waiter that asks after that must decide on a later read, which shows it
// first, not on the read in flight, which shows the holder.
func TestSharedReadNeverOlderThanTheCall(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr())
	other := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/driver")
	od, err := driver.New(other, path, "lock-", driver.MaxLeases(1))
	if err != nil {
		t.Fatal(err)
	}
	holder, err := od.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, c, path)
	mine, err := d.Enqueue(ctx, nil) // second
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Delete(ctx)
	probe, err := d.Enqueue(ctx, nil) // third: its wait sends the early read
	if err != nil {
		t.Fatal(err)
	}
	driver.Unlisted(mine)
	driver.Unlisted(probe)
	defer probe.Delete(ctx)

	held := px.HoldReply(zktest.OpGetChildren2)
	early := make(chan error, 1)
	go func() { early <- probe.Wait(ctx, &driver.WaitOptions{Try: true}) }()
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := holder.Delete(ctx); err != nil { // not through the proxy
		t.Fatal(err)
	}
	late := make(chan error, 1)
	go func() { late <- mine.Wait(ctx, &driver.WaitOptions{Try: true}) }()
	testenv.WaitFor(t, testenv.WaitShort, "the waiter queued for the next read", func() bool {
		return driver.SharedReadWaiters() == 1
	})
	held.Release()
	if err := <-early; !errors.Is(err, curator.ErrLocked) {
		t.Fatalf("the probe, on the read sent before the delete: %v, want ErrLocked", err)
	}
	if err := <-late; err != nil {
		t.Fatalf("a waiter that asked after the holder left: %v, want it to hold", err)
	}
}

// enqueueN makes n contenders of d, deleted when the test ends.
func enqueueN(t *testing.T, ctx context.Context, d *driver.Driver, n int) []*driver.Contender {
	t.Helper()
	cts := make([]*driver.Contender, n)
	for i := range cts {
		c, err := d.Enqueue(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Delete(ctx) })
		cts[i] = driver.Unlisted(c)
	}
	return cts
}

type cancelKey struct{}

// endCtx is a context the test ends when it chooses, with the error it
// chooses.
type endCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
	err  error
}

func newEndCtx(parent context.Context) *endCtx {
	return &endCtx{Context: parent, done: make(chan struct{})}
}

func (e *endCtx) Done() <-chan struct{} { return e.done }

func (e *endCtx) Err() error {
	select {
	case <-e.done:
		return e.err
	default:
		return nil
	}
}

func (e *endCtx) end(err error) { e.once.Do(func() { e.err = err; close(e.done) }) }

// senderGivesUp plays the scene of a shared read whose sender gives up: a
// hook holds the first read until two Try waiters queue for the next one,
// then cancels the context (an endCtx, under cancelKey{}) of whichever of
// them sends it. It returns the two waiters' errors and the reads sent.
func senderGivesUp(t *testing.T) (errs []error, sends int) {
	t.Helper()
	later := testenv.RestoreLater(t) // before the client: restored once it is closed
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	d := newDriver(t, c, testenv.Path(t, "/driver"))
	cts := enqueueN(t, ctx, d, 3)
	var mu sync.Mutex
	later(driver.SetReadHook(func(rctx context.Context) {
		mu.Lock()
		sends++
		n := sends
		mu.Unlock()
		switch n {
		case 1: // the first read: hold it until both waiters queue behind it
			testenv.WaitFor(t, testenv.WaitShort, "two waiters queued", func() bool { return driver.SharedReadWaiters() == 2 })
		case 2: // the read the two share: its sender gives up
			rctx.Value(cancelKey{}).(*endCtx).end(context.Canceled)
		}
	}))
	first := make(chan error, 1)
	go func() { first <- cts[0].Wait(ctx, &driver.WaitOptions{Try: true}) }()
	testenv.WaitFor(t, testenv.WaitShort, "the first read sent", func() bool { mu.Lock(); defer mu.Unlock(); return sends == 1 })
	got := make(chan error, 2)
	for _, ct := range cts[1:] {
		e := newEndCtx(ctx)
		wctx := context.WithValue(e, cancelKey{}, e)
		go func() { got <- ct.Wait(wctx, &driver.WaitOptions{Try: true}) }()
	}
	if err := <-first; err != nil {
		t.Fatalf("the first contender: %v, want it to hold", err)
	}
	errs = []error{<-got, <-got}
	mu.Lock()
	defer mu.Unlock()
	return errs, sends
}

// count returns how many of errs are target.
func count(errs []error, target error) int {
	n := 0
	for _, err := range errs {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

// The caller that sends a shared read may give up (its ctx ends) while
// others share it: they do not inherit its context's error, they read
// again.
func TestSharedReadSenderGivesUp(t *testing.T) {
	errs, sends := senderGivesUp(t)
	if count(errs, context.Canceled) != 1 || count(errs, curator.ErrLocked) != 1 || sends != 3 {
		t.Fatalf("waiters %v, %d reads; want one cancelled, one answered ErrLocked, and 3 reads (the sharer read again)", errs, sends)
	}
	if k := driver.SharedReadKeys(); k != 0 {
		t.Errorf("%d shared-read keys left behind", k)
	}
}

// A sharer whose own context ends while the read it shared ends by its
// sender's context is told its own error, never the sender's (the full
// suite of stop 25 caught a timed Lock answering context.Canceled): the
// hook ends the sharer's context with DeadlineExceeded just as it finds
// the read ended.
func TestSharedReadSharerToldItsOwnEnd(t *testing.T) {
	var (
		mu    sync.Mutex
		ended int
	)
	// Before senderGivesUp's client: restored once it is closed.
	testenv.RestoreLater(t)(driver.SetSharedEndHook(func(sctx context.Context) {
		if e, ok := sctx.Value(cancelKey{}).(*endCtx); ok && e.Err() == nil {
			mu.Lock()
			ended++
			mu.Unlock()
			e.end(context.DeadlineExceeded) // the sharer's deadline passes right here
		}
	}))
	errs, _ := senderGivesUp(t)
	mu.Lock()
	defer mu.Unlock()
	if count(errs, context.Canceled) != 1 || count(errs, context.DeadlineExceeded) != 1 || ended != 1 {
		t.Fatalf("waiters %v, %d ended at the hook; want one cancelled, one past its deadline, ended at the hook", errs, ended)
	}
}

// A shared read interrupted by Close ends with ErrClosed (not the
// client's internal context.Canceled), and nothing of it stays behind.
func TestSharedReadInterruptedByClose(t *testing.T) {
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	c := testenv.Client(t, px.Addr(), framework.WithNamespace(testenv.Uniq("shclose")))
	ctx := testenv.Ctx(t, testenv.WaitShort)
	d := newDriver(t, c, "/p")
	ct, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := px.HoldReply(zktest.OpGetChildren2)
	got := make(chan error, 1)
	go func() { got <- ct.Wait(ctx, &driver.WaitOptions{}) }()
	if err := held.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	held.Release()
	if err := <-got; !errors.Is(err, curator.ErrClosed) || errors.Is(err, context.Canceled) {
		t.Fatalf("a wait interrupted by Close: %v, want ErrClosed", err)
	}
	if k := driver.SharedReadKeys(); k != 0 {
		t.Errorf("%d shared-read keys left behind", k)
	}
}

// Many waiters asking at once, in waves, for thousands of reads: every
// flight is sent once (a flight sent twice closed its channel twice: the
// sender used to mark the path idle before marking its flight done, and a
// sharer woken in between sent the same flight again), every caller gets
// an answer that knows it, and nothing is left behind.
func TestSharedReadsUnderLoad(t *testing.T) {
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	d := newDriver(t, c, testenv.Path(t, "/driver"))
	first, err := d.Enqueue(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Delete(ctx)
	const waiters, rounds = 64, 30
	cts := enqueueN(t, ctx, d, waiters)
	var wg sync.WaitGroup
	for _, ct := range cts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := ct.Wait(ctx, &driver.WaitOptions{Try: true}); !errors.Is(err, curator.ErrLocked) {
					t.Errorf("Try of a waiter: %v, want ErrLocked", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if k := driver.SharedReadKeys(); k != 0 {
		t.Errorf("%d shared-read keys left behind", k)
	}
}

type nameKey struct{}

// A sharer that wakes after the flight it shares has been sent and
// answered must take that answer, never send the flight again: its sender
// marks the flight done and the path idle in one step. (It once marked the
// path idle first: a sharer waking in between sent the flight a second
// time, and the flight's channel was closed twice.) Hooks hold one sharer
// until the other has sent and ended the flight, then let it look.
func TestSharedReadSentOnce(t *testing.T) {
	later := testenv.RestoreLater(t) // before the client: restored once it is closed
	c := testenv.Client(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	d := newDriver(t, c, testenv.Path(t, "/driver"))
	cts := enqueueN(t, ctx, d, 3)
	named := func(n string) context.Context { return context.WithValue(ctx, nameKey{}, n) }
	var (
		mu    sync.Mutex
		sends int
	)
	holdY := make(chan struct{})
	yDone := make(chan error, 1)
	later(driver.SetReadHook(func(rctx context.Context) {
		mu.Lock()
		sends++
		n := sends
		mu.Unlock()
		if n == 1 { // the first read: until both others wait for the next
			testenv.WaitFor(t, testenv.WaitShort, "two sharers queued", func() bool { return driver.SharedReadWaiters() == 2 })
		}
	}))
	idled := 0
	later(driver.SetReadHooks(func(wctx context.Context) {
		if wctx.Value(nameKey{}) == "y" {
			<-holdY // y wakes late
		}
	}, func() {
		mu.Lock()
		idled++
		n := idled
		mu.Unlock()
		if n == 2 { // the second read is ended: now y looks
			close(holdY)
			select {
			case err := <-yDone:
				yDone <- err
			case <-time.After(testenv.WaitShort):
				t.Error("y never returned")
			}
		}
	}))
	first := make(chan error, 1)
	go func() { first <- cts[0].Wait(named("a"), &driver.WaitOptions{Try: true}) }()
	testenv.WaitFor(t, testenv.WaitShort, "the first read sent", func() bool { mu.Lock(); defer mu.Unlock(); return sends == 1 })
	xDone := make(chan error, 1)
	go func() { xDone <- cts[1].Wait(named("x"), &driver.WaitOptions{Try: true}) }()
	go func() { yDone <- cts[2].Wait(named("y"), &driver.WaitOptions{Try: true}) }()
	if err := <-first; err != nil {
		t.Fatalf("the first: %v", err)
	}
	// x first: x ends the second read, and its idle hook takes y's result
	// and puts it back; reading yDone here before x returned would race the
	// hook for it (a map's random order did, 1 run in 30 to 7 in 30).
	for _, w := range []struct {
		name string
		ch   chan error
	}{{"x", xDone}, {"y", yDone}} {
		if err := <-w.ch; !errors.Is(err, curator.ErrLocked) {
			t.Errorf("%s: %v, want ErrLocked", w.name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if sends != 2 {
		t.Fatalf("%d reads sent, want 2 (the second one shared, once)", sends)
	}
}
