package leader_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/leader"
)

// Selectors with auto-requeue take turns, one running at a time; Interrupt
// ends a turn; Close waits for a running function.
func TestSelectorTakesTurns(t *testing.T) {
	path := testenv.Path(t, "/leader")
	var running, turns, overlap atomic.Int32
	release := make(chan struct{})
	fn := func(ctx context.Context) error {
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		defer running.Add(-1)
		turns.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	var ss []*leader.Selector
	for _, id := range []string{"a", "b", "c"} {
		s, err := leader.NewSelector(testenv.Client(t, testenv.Shared().ConnectString()), path, id, fn, leader.WithAutoRequeue())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	if err := ss[0].Start(); !errors.Is(err, curator.ErrBusy) {
		t.Fatalf("a second Start: %v", err)
	}
	for i := 0; i < 6; i++ {
		testenv.WaitFor(t, testenv.WaitShort, "a turn running", func() bool { return running.Load() == 1 && int(turns.Load()) == i+1 })
		leaders := 0
		var l *leader.Selector
		for _, s := range ss {
			if s.HasLeadership() {
				leaders++
				l = s
			}
		}
		if leaders != 1 {
			t.Fatalf("%d leaders", leaders)
		}
		if i%2 == 0 {
			release <- struct{}{}
		} else {
			l.Interrupt()
		}
	}
	testenv.WaitFor(t, testenv.WaitShort, "a turn running", func() bool { return running.Load() == 1 })
	for _, s := range ss {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if running.Load() != 0 || overlap.Load() != 0 {
		t.Fatalf("after Close: %d running, %d overlaps", running.Load(), overlap.Load())
	}
	c := testenv.Client(t, testenv.Shared().ConnectString())
	if kids := testenv.Children(t, c, path); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
}

// Without auto-requeue a selector leads once; Requeue queues one more
// turn. A function's error is reported, not swallowed (CURATOR-195).
func TestSelectorRequeue(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	var mu sync.Mutex
	var errs []error
	turns := make(chan struct{}, 10)
	boom := errors.New("boom")
	c := testenv.Client(t, testenv.Shared().ConnectString())
	s, err := leader.NewSelector(c, path, "a",
		func(context.Context) error { turns <- struct{}{}; return boom },
		leader.WithOnError(func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	turn := func() {
		t.Helper()
		select {
		case <-turns:
		case <-ctx.Done():
			t.Fatal("no turn:", ctx.Err())
		}
	}
	turn()
	testenv.WaitFor(t, testenv.WaitShort, "the turn over", func() bool { ok, _ := s.Requeue(); return ok })
	turn()
	testenv.WaitFor(t, testenv.WaitShort, "both errors reported", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(errs) == 2 && errors.Is(errs[0], boom)
	})
	// The turn is over once our node is gone: with no Requeue, nothing is
	// queued then (Requeue queues, rather than finding a turn queued), and
	// no third turn has come.
	testenv.WaitFor(t, testenv.WaitShort, "the second turn's node gone", func() bool { return len(testenv.Children(t, c, path)) == 0 })
	testenv.NotYet(t, turns, "a third turn without Requeue")
	if ok, err := s.Requeue(); !ok || err != nil {
		t.Fatalf("Requeue after the turn: %v %v: a turn was queued without Requeue", ok, err)
	}
	turn()
}

// Close of a leading selector: leadership lasts until its function returns
// (Curator's contract), so when the function sees its context end, its
// node is still first in line and nobody else leads.
func TestSelectorCloseWaitsForTheFunction(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	c := testenv.Client(t, testenv.Shared().ConnectString())
	running := make(chan struct{})
	seen := make(chan string, 1)
	var a *leader.Selector
	a, err := leader.NewSelector(c, path, "a", func(fctx context.Context) error {
		close(running)
		<-fctx.Done()
		ps, err := a.Participants(ctx)
		if err != nil || len(ps) == 0 {
			seen <- "error"
			return err
		}
		seen <- ps[0].ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := leader.NewSelector(testenv.Client(t, testenv.Shared().ConnectString()), path, "b", func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	<-running
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { ps, _ := a.Participants(ctx); return len(ps) == 2 })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "a" {
		t.Fatalf("when a's function saw its context end, %s was first in line", got)
	}
}

// A Close that comes after the selector has won but before its function
// runs finds no function to wait for and lets the term go; the function
// must then not run at all: someone else may lead already.
func TestSelectorClosedBetweenWinAndFunction(t *testing.T) {
	later := testenv.RestoreLater(t) // hooks restored after the client is closed
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	c := testenv.Client(t, testenv.Shared().ConnectString())
	won, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	later(leader.SetWonHook(func() { once.Do(func() { close(won); <-release }) }))
	var ran atomic.Bool
	a, err := leader.NewSelector(c, path, "a", func(context.Context) error { ran.Store(true); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	<-won
	node := a.Node()
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	testenv.WaitFor(t, testenv.WaitShort, "a's node deleted by Close", func() bool {
		ok, _, err := c.Exists(ctx, node)
		return err == nil && !ok
	})
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Fatal("the function ran after Close had let the term go")
	}
}

// A panic in the function is recovered: reported through WithOnError as an
// error wrapping curator.ErrPanic that carries the value and the stack, and
// the turn ends at once as if the function had returned: our node is
// deleted, so the next in line leads while our session lives on, and with
// auto-requeue we take part again. (Before, the panic killed the process,
// and the group was leaderless until the server expired its session.)
func TestSelectorFunctionPanics(t *testing.T) {
	ctx := testenv.Ctx(t, testenv.WaitLong)
	path := testenv.Path(t, "/leader")
	ca := testenv.Client(t, testenv.Shared().ConnectString())
	errs := make(chan error, 10)
	running, bInLine := make(chan struct{}, 10), make(chan struct{})
	var turns atomic.Int32
	a, err := leader.NewSelector(ca, path, "a", func(fctx context.Context) error {
		running <- struct{}{}
		if turns.Add(1) == 1 {
			<-bInLine
			panicInTurn("boom")
		}
		<-fctx.Done()
		return nil
	}, leader.WithAutoRequeue(), leader.WithOnError(func(err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	bLeads, bRelease := make(chan struct{}, 1), make(chan struct{})
	b, err := leader.NewSelector(testenv.Client(t, testenv.Shared().ConnectString()), path, "b", func(fctx context.Context) error {
		bLeads <- struct{}{}
		select {
		case <-bRelease:
		case <-fctx.Done():
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.Recv(t, running, testenv.WaitShort, "a's first turn")
	first := a.Node()
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "b in line", func() bool { ps, _ := a.Participants(ctx); return len(ps) == 2 })
	close(bInLine) // a's function panics

	err = testenv.Recv(t, errs, testenv.WaitShort, "the panic reported")
	var pe *leader.PanicError
	if !errors.Is(err, curator.ErrPanic) || !errors.As(err, &pe) {
		t.Fatalf("reported %v, want a *leader.PanicError wrapping curator.ErrPanic", err)
	}
	if pe.Value != "boom" || !strings.Contains(string(pe.Stack), "panicInTurn") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("the panic's value %v, stack %q, error %q", pe.Value, pe.Stack, err)
	}
	testenv.Recv(t, bLeads, testenv.WaitShort, "b leading after a's panic")
	if ca.Session().Lost() {
		t.Fatal("a's session was lost: b led by its expiry, not by a's release")
	}
	if ok, _, err := ca.Exists(ctx, first); err != nil || ok {
		t.Fatalf("a's node %s after the panic: exists %v (%v)", first, ok, err)
	}
	testenv.WaitFor(t, testenv.WaitShort, "a requeued", func() bool { n := a.Node(); return n != "" && n != first })
	close(bRelease)
	testenv.Recv(t, running, testenv.WaitShort, "a's second turn")
	testenv.NotYet(t, errs, "another error")
}

// panicInTurn panics with v: its name is in the stack the panic's error
// carries.
//
//go:noinline
func panicInTurn(v any) { panic(v) }
