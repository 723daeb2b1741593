package queue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/testing/zktest"
)

func TestSimple(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	s, err := queue.NewSimple(c, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Poll(ctx); ok || err != nil {
		t.Fatalf("Poll of a queue not made: %v %v", ok, err)
	}
	for i := range 12 { // past 10: the order must not be the names' order by length
		if err := s.Offer(ctx, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	kids := testenv.Children(t, c, path)
	if len(kids) != 12 || !strings.HasPrefix(kids[0], "qn-") {
		t.Fatalf("children %v, want 12 qn- nodes", kids)
	}
	if d, ok, err := s.Peek(ctx); string(d) != "0" || !ok || err != nil {
		t.Fatalf("Peek = %q %v %v", d, ok, err)
	}
	for i := range 12 {
		var d []byte
		var ok bool
		if i%2 == 0 {
			d, ok, err = s.Poll(ctx)
		} else {
			d, err = s.Take(ctx)
			ok = true
		}
		if string(d) != fmt.Sprint(i) || !ok || err != nil {
			t.Fatalf("item %d: %q %v %v", i, d, ok, err)
		}
	}
	if d, ok, err := s.Peek(ctx); ok || err != nil {
		t.Fatalf("Peek of an empty queue = %q %v %v", d, ok, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := s.Take(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take of an empty queue = %v, want DeadlineExceeded", err)
	}
}

// A Take waits for an Offer, on a queue whose path does not exist yet and
// on one whose container was reaped meanwhile (CURATOR-308).
func TestSimpleTakeWaits(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	other := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := queuePath(t)
	s, _ := queue.NewSimple(c, path)
	p, _ := queue.NewSimple(other, path)
	for round := range 2 {
		got := make(chan string, 1)
		go func() {
			d, err := s.Take(ctx)
			if err != nil {
				got <- err.Error()
				return
			}
			got <- string(d)
		}()
		testenv.WaitFor(t, testenv.WaitShort, "Take to wait on a watch", func() bool { _, w := c.WatchStats(); return w == 1 })
		testenv.NotYet(t, got, "Take")
		if err := p.Offer(ctx, []byte(fmt.Sprint(round))); err != nil {
			t.Fatal(err)
		}
		if d := testenv.Recv(t, got, testenv.WaitShort, "Take"); d != fmt.Sprint(round) {
			t.Fatalf("round %d: Take = %q", round, d)
		}
		// The container is reaped once empty (the server's check runs
		// every containerCheckIntervalMs).
		testenv.Eventually(t, testenv.WaitLong, "the container reaped", func() error {
			if ok, _, err := c.Exists(ctx, path); ok || err != nil {
				return fmt.Errorf("exists %v %v", ok, err)
			}
			return nil
		})
	}
}

func TestQueueFIFOAndCuratorsLayout(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	producer, err := queue.New[string](c, path, queue.String{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		if err := producer.Put(ctx, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := producer.PutMulti(ctx, []string{"m1", "m2"}); err != nil {
		t.Fatal(err)
	}
	kids := testenv.Children(t, c, path)
	slices.Sort(kids)
	if len(kids) != 16 || kids[0] != "queue-0000000000" {
		t.Fatalf("children %v", kids)
	}
	data, _, err := c.Get(ctx, path+"/"+kids[0])
	if err != nil || string(data) != string(queue.Encode([]byte("0"))) {
		t.Fatalf("item bytes % x %v", data, err)
	}
	if n, err := producer.Len(ctx); n != 16 || err != nil {
		t.Fatalf("Len = %d %v", n, err)
	}
	col := newCollector[string]()
	consumer, err := queue.New(c, path, queue.String{}, col.consume)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { consumer.Close() })
	if err := consumer.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := consumer.Start(ctx); !errors.Is(err, curator.ErrBusy) {
		t.Fatalf("second Start = %v, want ErrBusy", err)
	}
	got := col.next(t, 17)
	want := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "m1", "m2"}
	if !slices.Equal(got, want) {
		t.Fatalf("consumed %v, want %v", got, want)
	}
	// A put after the start is consumed too.
	if err := producer.Put(ctx, "late"); err != nil {
		t.Fatal(err)
	}
	if got := col.next(t, 1); got[0] != "late" {
		t.Fatalf("consumed %v", got)
	}
	testenv.WaitFor(t, testenv.WaitShort, "the queue empty", func() bool { return len(testenv.Children(t, c, path)) == 0 })
	if err := consumer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := consumer.Put(ctx, "x"); !errors.Is(err, curator.ErrClosed) {
		t.Fatalf("Put after Close = %v, want ErrClosed", err)
	}
}

// With a lock path, a failed item is requeued at the back (ErrorRequeue),
// and of a PutMulti node only the failed item and those after it are;
// the lock nodes are gone once consumed.
func TestLockPathRequeue(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	locks := path + "-locks"
	var failures atomic.Int32
	col := newCollector[string]()
	col.fail = func(v string) error {
		if v == "b" && failures.Add(1) == 1 {
			return errors.New("first b fails")
		}
		return nil
	}
	var reported atomic.Int32
	q, err := queue.New(c, path, queue.String{}, col.consume, queue.WithLockPath(locks),
		queue.WithOnError(func(error) { reported.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.PutMulti(ctx, []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// "a" consumed, "b" failed: "b" and "c" requeued, behind "d".
	if got, want := col.next(t, 4), []string{"a", "d", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("consumed %v, want %v", got, want)
	}
	if reported.Load() != 1 {
		t.Fatalf("%d errors reported, want 1", reported.Load())
	}
	testenv.WaitFor(t, testenv.WaitShort, "queue and locks empty", func() bool {
		return len(testenv.Children(t, c, path)) == 0 && len(testenv.Children(t, c, locks)) == 0
	})
}

// ErrorDelete drops a failed item.
func TestLockPathErrorDelete(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	col := newCollector[string]()
	col.fail = func(v string) error {
		if v == "bad" {
			return errors.New("refused")
		}
		return nil
	}
	errs := make(chan error, 10)
	q, err := queue.New(c, path, queue.String{}, col.consume, queue.WithLockPath(path+"-locks"),
		queue.WithErrorMode(queue.ErrorDelete), queue.WithOnError(func(err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"bad", "good"} {
		if err := q.Put(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { q.Close() })
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := col.next(t, 1); got[0] != "good" {
		t.Fatalf("consumed %v", got)
	}
	if err := testenv.Recv(t, errs, testenv.WaitShort, "the error"); !strings.Contains(err.Error(), "refused") {
		t.Fatalf("reported %v", err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "queue empty", func() bool { return len(testenv.Children(t, c, path)) == 0 })
}

// A consumer's panic is an error (ErrPanic); items not in Curator's format
// or refused by the Serializer are reported as ErrCorrupt and deleted;
// foreign children are left alone.
func TestCorruptAndForeignItems(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	errs := make(chan error, 10)
	col := newCollector[int]()
	col.fail = func(v int) error {
		if v == 7 {
			panic("seven")
		}
		return nil
	}
	ser := queue.Funcs[int]{
		Ser: func(v int) ([]byte, error) { return []byte(fmt.Sprint(v)), nil },
		Deser: func(b []byte) (int, error) {
			var v int
			_, err := fmt.Sscan(string(b), &v)
			return v, err
		},
	}
	q, err := queue.New(c, path, ser, col.consume, queue.WithOnError(func(err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, 7); err != nil {
		t.Fatal(err)
	}
	for _, raw := range [][]byte{[]byte("not a queue item"), queue.Encode([]byte("x"))} {
		if _, err := c.Create(ctx, path+"/queue-", raw, framework.WithMode(framework.ModePersistentSequential)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create(ctx, path+"/foreign", nil); err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, 42); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := col.next(t, 1); got[0] != 42 {
		t.Fatalf("consumed %v", got)
	}
	var panics, corrupt int
	for range 3 {
		err := testenv.Recv(t, errs, testenv.WaitShort, "an error")
		switch {
		case errors.Is(err, curator.ErrPanic):
			panics++
		case errors.Is(err, curator.ErrCorrupt):
			corrupt++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if panics != 1 || corrupt != 2 {
		t.Fatalf("%d panics, %d corrupt, want 1 and 2", panics, corrupt)
	}
	if kids := testenv.Children(t, c, path); !slices.Equal(kids, []string{"foreign"}) {
		t.Fatalf("left %v, want the foreign node alone", kids)
	}
}

func TestPriority(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	var failed atomic.Bool
	col := newCollector[string]()
	col.fail = func(v string) error {
		if v == "p5" && !failed.Swap(true) {
			return errors.New("once")
		}
		return nil
	}
	q, err := queue.NewPriority(c, path, queue.String{}, col.consume, queue.WithLockPath(path+"-locks"),
		queue.WithOnError(func(error) {}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int32{10, -3, 5, 10, 0, -1 << 31, 1<<31 - 1} {
		if err := q.Put(ctx, fmt.Sprintf("p%d", p), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.PutMulti(ctx, []string{"m1", "m2"}, 7); err != nil {
		t.Fatal(err)
	}
	if kids := testenv.Children(t, c, path); !slices.Contains(kids, "queue-1000000050000000002") {
		t.Fatalf("children %v, want Curator's name for priority 5", kids)
	}
	t.Cleanup(func() { q.Close() })
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// p5 fails once and is requeued with its priority: it comes again
	// before m1 (Curator's would come back first, priority-less).
	want := []string{"p-2147483648", "p-3", "p0", "p5", "m1", "m2", "p10", "p10", "p2147483647"}
	if got := col.next(t, len(want)); !slices.Equal(got, want) {
		t.Fatalf("consumed %v, want %v", got, want)
	}
}

func TestDelay(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	type took struct {
		v  string
		at time.Time
	}
	got := make(chan took, 10)
	q, err := queue.NewDelay(c, path, queue.String{}, func(_ context.Context, v string) error {
		got <- took{v, time.Now()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	puts := map[string]time.Time{"late": now.Add(1500 * time.Millisecond), "soon": now.Add(700 * time.Millisecond), "past": now.Add(-time.Hour)}
	for _, v := range []string{"late", "soon", "past"} {
		if err := q.Put(ctx, v, puts[v]); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"past", "soon", "late"} {
		g := testenv.Recv(t, got, testenv.WaitShort, want)
		if g.v != want {
			t.Fatalf("consumed %s, want %s", g.v, want)
		}
		// Never before its time (by the milliseconds in its name).
		if g.at.Before(puts[want].Truncate(time.Millisecond)) {
			t.Fatalf("%s consumed at %v, before %v", want, g.at, puts[want])
		}
	}
}

func TestIDQueue(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	col := newCollector[string]()
	q, err := queue.NewIDQueue(c, path, queue.String{}, col.consume, queue.WithLockPath(path+"-locks"))
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"x", "a/b", "x", "y", "a|b"} {
		if err := q.Put(ctx, fmt.Sprintf("%s-%d", id, i), id); err != nil {
			t.Fatal(err)
		}
	}
	if kids := testenv.Children(t, c, path); !slices.Contains(kids, "queue-|a_b|0000000001") {
		t.Fatalf("children %v, want Curator's name for id a/b", kids)
	}
	if n, err := q.Remove(ctx, "x"); n != 2 || err != nil {
		t.Fatalf("Remove(x) = %d %v", n, err)
	}
	if n, err := q.Remove(ctx, "a/b"); n != 2 || err != nil { // a/b and a|b are both a_b
		t.Fatalf("Remove(a/b) = %d %v", n, err)
	}
	if n, err := q.Remove(ctx, "none"); n != 0 || err != nil {
		t.Fatalf("Remove(none) = %d %v", n, err)
	}
	for i, id := range []string{"z", "w"} {
		if err := q.Put(ctx, fmt.Sprintf("%s-%d", id, i+5), id); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { q.Close() })
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := col.next(t, 3), []string{"y-3", "z-5", "w-6"}; !slices.Equal(got, want) {
		t.Fatalf("consumed %v, want %v", got, want)
	}
}

// WithMaxItems: a put waits while the queue is full, until its context
// ends (one deadline for the whole put), and goes through once there is room.
func TestMaxItems(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	q, err := queue.New[string](c, path, queue.String{}, nil, queue.WithMaxItems(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1", "2"} {
		if err := q.Put(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := q.Put(short, "3"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Put into a full queue = %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- q.Put(ctx, "3") }()
	testenv.WaitFor(t, testenv.WaitShort, "the put to wait", func() bool { _, w := c.WatchStats(); return w == 1 })
	testenv.NotYet(t, done, "Put into a full queue")

	kids := testenv.Children(t, c, path)
	slices.Sort(kids)
	if err := c.Delete(ctx, path+"/"+kids[0]); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, done, testenv.WaitShort, "the put"); err != nil {
		t.Fatal(err)
	}
	if n, _ := q.Len(ctx); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	c := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitShort)
	path := queuePath(t)
	nop := func(context.Context, string) error { return nil }
	for name, f := range map[string]func() error{
		"nil client":     func() error { _, err := queue.New(nil, path, queue.String{}, nop); return err },
		"root path":      func() error { _, err := queue.New(c, "/", queue.String{}, nop); return err },
		"relative path":  func() error { _, err := queue.NewSimple(c, "q"); return err },
		"nil serializer": func() error { _, err := queue.New[string](c, path, nil, nop); return err },
		"error mode, no lock": func() error {
			_, err := queue.New(c, path, queue.String{}, nop, queue.WithErrorMode(queue.ErrorDelete))
			return err
		},
		"unknown error mode": func() error {
			_, err := queue.New(c, path, queue.String{}, nop, queue.WithLockPath(path+"l"), queue.WithErrorMode(9))
			return err
		},
		"lock path is queue": func() error { _, err := queue.New(c, path, queue.String{}, nop, queue.WithLockPath(path)); return err },
		"bad lock path":      func() error { _, err := queue.New(c, path, queue.String{}, nop, queue.WithLockPath("x")); return err },
		"max items 0":        func() error { _, err := queue.New(c, path, queue.String{}, nop, queue.WithMaxItems(0)); return err },
		"concurrency 0":      func() error { _, err := queue.New(c, path, queue.String{}, nop, queue.WithConcurrency(0)); return err },
		"min refresh on Queue": func() error {
			_, err := queue.New(c, path, queue.String{}, nop, queue.WithMinItemsBeforeRefresh(2))
			return err
		},
		"nil OnError": func() error {
			_, err := queue.NewDelay(c, path, queue.String{}, nop, queue.WithOnError(nil))
			return err
		},
	} {
		if err := f(); !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	q, _ := queue.New[string](c, path, queue.String{}, nil)
	d, _ := queue.NewDelay[string](c, path+"d", queue.String{}, nil)
	id, _ := queue.NewIDQueue[string](c, path+"i", queue.String{}, nil)
	s, _ := queue.NewSimple(c, path+"s")
	bad := queue.Funcs[string]{Ser: func(string) ([]byte, error) { return nil, errors.New("no") }}
	qb, _ := queue.New(c, path, bad, nil)
	var nilCtx context.Context
	for name, err := range map[string]error{
		"nil ctx Put":      q.Put(nilCtx, "x"),
		"nil ctx Start":    q.Start(nilCtx),
		"nil ctx Take":     func() error { _, err := s.Take(nilCtx); return err }(),
		"empty PutMulti":   q.PutMulti(ctx, nil),
		"zero time":        d.Put(ctx, "x", time.Time{}),
		"empty id":         id.Put(ctx, "x", ""),
		"empty id remove":  func() error { _, err := id.Remove(ctx, ""); return err }(),
		"serializer fails": qb.Put(ctx, "x"),
	} {
		if !errors.Is(err, curator.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("bad input left %v", kids)
	}
}

// A consumer whose session expires mid-item has its context ended
// (ErrLockLost), and another consumer takes the item again: at least once.
func TestSessionExpiryRedelivers(t *testing.T) {
	t.Parallel()
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	weak := newClient(t, px.Addr())
	strong := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := queuePath(t)
	locks := path + "-locks"
	inside := make(chan struct{})
	ended := make(chan error, 1)
	first, err := queue.New(weak, path, queue.String{}, func(ctx context.Context, v string) error {
		close(inside)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return ctx.Err()
	}, queue.WithLockPath(locks), queue.WithOnError(func(error) {}))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Put(ctx, "item"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, inside, testenv.WaitShort, "the first consumer")
	col := newCollector[string]()
	second, _ := queue.New(strong, path, queue.String{}, col.consume, queue.WithLockPath(locks))
	t.Cleanup(func() { second.Close() })
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, px, testenv.Shared(), weak.Session().ID()); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Recv(t, ended, testenv.WaitLong, "the first consumer's end"); !errors.Is(err, curator.ErrLockLost) {
		t.Fatalf("first consumer's context ended with %v, want ErrLockLost", err)
	}
	if got := col.next(t, 1); got[0] != "item" {
		t.Fatalf("second consumed %v", got)
	}
	testenv.WaitFor(t, testenv.WaitShort, "queue and locks empty", func() bool {
		return len(testenv.Children(t, strong, path)) == 0 && len(testenv.Children(t, strong, locks)) == 0
	})
}

// A consumer cut off for longer than its session timeout consumes what
// was put meanwhile once healed (CURATOR-623).
func TestLongPartition(t *testing.T) {
	t.Parallel()
	px := zktest.StartProxy(t, testenv.Shared().Addr())
	weak := newClient(t, px.Addr())
	strong := newClient(t, testenv.Shared().ConnectString())
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := queuePath(t)
	col := newCollector[string]()
	q, err := queue.New(weak, path, queue.String{}, col.consume, queue.WithLockPath(path+"-locks"), queue.WithOnError(func(error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p, _ := queue.New[string](strong, path, queue.String{}, nil)
	if err := p.Put(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	col.next(t, 1)
	sid := weak.Session().ID()
	px.Blackhole()
	testenv.Eventually(t, testenv.WaitLong, "the session expired on the server", func() error {
		ids, err := testenv.Shared().Sessions()
		if err != nil {
			return err
		}
		if slices.Contains(ids, sid) {
			return errors.New("still there")
		}
		return nil
	})
	if err := p.Put(ctx, "during"); err != nil {
		t.Fatal(err)
	}
	px.Heal()
	if got := col.next(t, 1); got[0] != "during" {
		t.Fatalf("consumed %v", got)
	}
}
