package driver_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/testing/zktest"
)

// onwardScene is a read of ours (through the counting proxy) queued
// behind the writers of another client.
type onwardScene struct {
	*createScene
	pk      *parks
	writers []*driver.Contender
	ours    *driver.Contender
}

// newOnwardScene queues writers writers (another client's), then our read;
// call it after any hook of the test's is set (the parks count's hook is
// restored once the clients close).
func newOnwardScene(t *testing.T, writers int) *onwardScene {
	pk := countParks(t)
	s := &onwardScene{createScene: newCreateScene(t, "/onward"), pk: pk}
	read, write := newRWDrivers(t, s.createScene)
	for range writers {
		w, err := write(true).Enqueue(s.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.writers = append(s.writers, w)
	}
	s.px.ResetCounts()
	var err error
	if s.ours, err = read(false).Enqueue(s.ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.ours.DeleteQuietly(s.ctx) })
	return s
}

// A read queued behind two writers waits on the first; once it goes, the
// read waits on the second without reading the queue again, and holds once
// that one goes, still on the listing behind its create (onward.go): one
// read of the queue in all, where Curator's makes three.
func TestOnwardPastEachWriter(t *testing.T) {
	s := newOnwardScene(t, 2)
	done := waitOn(s.ctx, s.ours)
	s.pk.waitParked(t, s.ours, 1, "our read waiting on the first writer")
	gone(t, s.ctx, s.writers[0])
	s.pk.waitParked(t, s.ours, 2, "our read waiting on the second writer")
	testenv.NotYet(t, done, "our read while the second writer is queued before it")
	gone(t, s.ctx, s.writers[1])
	heldThenGone(t, s.ctx, s.ours, done)
	if r, w := queueReads(s.px), s.px.WatchRequests(zktest.OpGetData); r != 1 || w != 3 {
		t.Errorf("%d reads of the queue, %d watched getData; want 1 (behind the create) and 3 (our mark, each writer)", r, w)
	}
}

// A writer gone between the reading the read decided on and its watch
// (the watched getData finds no node) is gone as surely as one whose
// deletion the watch tells: the read holds without reading the queue
// again.
func TestOnwardWriterGoneBeforeItsWatch(t *testing.T) {
	later := testenv.RestoreLater(t) // before the clients: restored once they are closed
	var s *onwardScene
	var once sync.Once
	later(driver.SetWaitHook(func(c *driver.Contender) {
		if c == s.ours {
			once.Do(func() { gone(t, s.ctx, s.writers[0]) }) // decided on a reading that lists it
		}
	}))
	s = newOnwardScene(t, 1)
	heldThenGone(t, s.ctx, s.ours, waitOn(s.ctx, s.ours))
	if r, w := queueReads(s.px), s.px.WatchRequests(zktest.OpGetData); r != 1 || w != 2 {
		t.Errorf("%d reads of the queue, %d watched getData; want 1 (behind the create) and 2 (our mark, the writer found gone)", r, w)
	}
	if p := s.pk.of(s.ours); p != 0 {
		t.Errorf("our read parked %d times, want 0", p)
	}
}

// Our node deleted while we wait (an operator): when the writer goes, the
// spent mark sends the read back to the queue, where its node is missing.
// Deciding onward there would hold with no node, beside a writer queued
// behind it that takes the lock.
func TestOnwardNotWithOurNodeGone(t *testing.T) {
	s := newOnwardScene(t, 1)
	done := waitOn(s.ctx, s.ours)
	s.pk.waitParked(t, s.ours, 1, "our read waiting on the writer, its node marked")
	if err := s.other.Delete(s.ctx, s.ours.Node()); err != nil {
		t.Fatal(err)
	}
	gone(t, s.ctx, s.writers[0])
	if err := testenv.Recv(t, done, testenv.WaitShort, "our read's outcome"); !errors.Is(err, curator.ErrNodeVanished) {
		t.Fatalf("our read, its node deleted before the writer: %v, want ErrNodeVanished", err)
	}
}

// A new connection spends the mark (it claims one connection's order of
// events): a read whose writer went while it was disconnected reads the
// queue again before it holds, and finds out there if its node went too.
func TestOnwardReadsAgainAfterAReconnect(t *testing.T) {
	for _, ownGone := range []bool{false, true} {
		t.Run(map[bool]string{false: "node kept", true: "node deleted"}[ownGone], func(t *testing.T) {
			s := newOnwardScene(t, 1)
			done := waitOn(s.ctx, s.ours)
			s.pk.waitParked(t, s.ours, 1, "our read waiting on the writer, its node marked")
			awayWhile(t, s.px, s.c, func() {
				if ownGone {
					if err := s.other.Delete(s.ctx, s.ours.Node()); err != nil { // an operator
						t.Fatal(err)
					}
				}
				gone(t, s.ctx, s.writers[0])
			})
			err := testenv.Recv(t, done, testenv.WaitShort, "our read's outcome")
			if ownGone {
				if !errors.Is(err, curator.ErrNodeVanished) {
					t.Fatalf("our read, its node deleted: %v, want ErrNodeVanished", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("our read once the writer went: %v", err)
			}
			if r := queueReads(s.px); r != 1 {
				t.Errorf("our read held after %d reads of the queue, want 1: a mark of the connection before does not count", r)
			}
		})
	}
}

// Onward is the read lock's alone: a writer queued behind a read reads
// the queue again when that read goes (a downgrade may have put a read
// node before it, CURATOR-621).
func TestOnwardNotForAWriter(t *testing.T) {
	pk := countParks(t) // before the scene's clients: restored after them
	s := newCreateScene(t, "/onward")
	read, write := newRWDrivers(t, s)
	r, err := read(true).Acquire(s.ctx, nil, &driver.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.px.ResetCounts()
	w, err := write(false).Enqueue(s.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := waitOn(s.ctx, w)
	pk.waitParked(t, w, 1, "our writer waiting on the read")
	gone(t, s.ctx, r)
	heldThenGone(t, s.ctx, w, done)
	if n, g := queueReads(s.px), s.px.WatchRequests(zktest.OpGetData); n != 2 || g != 1 {
		t.Errorf("%d reads of the queue, %d watched getData; want 2 (behind the create, after the read went) and 1 (the read; no mark)", n, g)
	}
}
