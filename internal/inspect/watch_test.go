package inspect

import (
	"context"
	"errors"
	"testing"
	"time"
)

// drawn collects Watch's draws.
type drawn struct {
	ch chan *Snapshot
}

func (d drawn) draw(s *Snapshot, err error) error {
	if err != nil {
		return err
	}
	d.ch <- s
	return nil
}

func (d drawn) next(t *testing.T) *Snapshot {
	t.Helper()
	select {
	case s := <-d.ch:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("no draw in 30s")
		return nil
	}
}

// A burst of events on every watch costs one read, and Watch leaves no
// watch behind.
func TestWatchCoalesces(t *testing.T) {
	f := newFake()
	for i := 0; i < 20; i++ {
		f.add("/w/m"+string(rune('a'+i))+"/"+contender(i, "lock-", 0), "", int64(i+1), 0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := drawn{ch: make(chan *Snapshot, 100)}
	done := make(chan error, 1)
	go func() { done <- Watch(ctx, f, "/w", WatchOptions{Coalesce: 20 * time.Millisecond}, d.draw) }()
	if s := d.next(t); len(s.Recipes) != 20 {
		t.Fatalf("first draw: %v", kinds(s))
	}
	f.mu.Lock()
	reads := f.gets["/w"]
	f.mu.Unlock()
	if fired := f.fire(); fired < 21 {
		t.Fatalf("fired %d watches, want one per node read (21) and one exists watch", fired)
	}
	f.remove("/w/ma/" + contender(0, "lock-", 0))
	s := d.next(t)
	if len(s.Recipes) != 20 { // /w/ma is now a plain node
		t.Fatalf("second draw: %v", kinds(s))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch: %v", err)
	}
	f.mu.Lock()
	got := f.gets["/w"] - reads
	f.mu.Unlock()
	if got != 1 {
		t.Errorf("the burst cost %d reads of the root, want 1", got)
	}
	if extra := len(d.ch); extra != 0 {
		t.Errorf("%d draws more after one burst", extra)
	}
	if n := f.live(); n != 0 {
		t.Errorf("%d watches left unstopped", n)
	}
}

// A path that vanishes is drawn Missing, and drawn again once created.
func TestWatchMissingPath(t *testing.T) {
	f := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := drawn{ch: make(chan *Snapshot, 100)}
	done := make(chan error, 1)
	go func() { done <- Watch(ctx, f, "/later", WatchOptions{Coalesce: time.Millisecond}, d.draw) }()
	if s := d.next(t); !s.Missing {
		t.Fatalf("first draw %+v, want Missing", s)
	}
	f.add("/later/"+contender(1, "lock-", 0), "", 1, 0)
	f.fire()
	if s := d.next(t); s.Missing || len(s.Recipes) != 1 {
		t.Fatalf("after creation %+v", s)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// draw's error ends Watch; a read error is given to draw.
func TestWatchErrors(t *testing.T) {
	f := newFake()
	f.add("/x/y", "", 0, 0)
	f.nodes["/x"].kidsErr = errors.New("boom")
	stop := errors.New("stop")
	var seen error
	err := Watch(context.Background(), f, "/x", WatchOptions{}, func(s *Snapshot, err error) error {
		seen = err
		return stop
	})
	if !errors.Is(err, stop) || seen == nil || seen.Error() != "boom" {
		t.Errorf("Watch = %v, draw saw %v", err, seen)
	}
	if n := f.live(); n != 0 {
		t.Errorf("%d watches left unstopped", n)
	}
}
