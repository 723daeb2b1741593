package semaphore

import (
	"context"

	"github.com/gocurator/curator/internal/driver"
)

// speculation is a lease create that a waiter for the internal lock starts
// the moment its predecessor there is gone, beside the round trip that
// tells it whether it now holds the lock (driver.WaitOptions.OnWoken): the
// section every acquirer passes through alone, from taking the lock to
// deleting it, is one round trip shorter (issue 16). When the waiter's
// process knows at once that it holds (the handoff, driver/handoff.go,
// with no request) there is no round trip to overlap, and no speculation:
// the acquire makes its node itself, a goroutine and a hop fewer.
//
// Why it is safe: the count rule alone keeps the leases within the maximum
// (a node counts wherever it came from); the lock only keeps acquirers
// from waiting for leases side by side. A speculative node is made while
// its maker is next in the lock's queue, and is kept only if the maker then
// holds the lock; otherwise (its predecessor had given up while another
// still held the lock) it is deleted as soon as it is made, so it never
// waits beside the holder's. A holder waiting on the leases meanwhile sees
// one more node for a moment, then its deletion: a change, so it looks
// again. Attacked by: TestSemaphoreSpeculationOnlyForTheLockHolder (a
// speculation whose maker turns out not to hold),
// TestSemaphoreNoSpeculationOnAHandoff, TestSemaphoreNoStallOneLease.
type speculation struct {
	done chan struct{} // closed once c and err are set
	c    *driver.Contender
	err  error
}

// speculateHook, set only by tests, is called with each speculative node
// once it is made.
var speculateHook func(node string)

// speculate starts making a lease node.
func (s *Semaphore) speculate(ctx context.Context) *speculation {
	sp := &speculation{done: make(chan struct{})}
	go func() {
		defer close(sp.done)
		sp.c, sp.err = s.lease.Enqueue(ctx, s.opts.Data)
		if sp.err == nil && speculateHook != nil {
			speculateHook(sp.c.Node())
		}
	}()
	return sp
}

// take returns the speculation's node once made, for the acquire to keep;
// nil if there is none (no speculation, its create failed, or ctx ended
// first: then it is discarded), and the acquire makes its own.
func (sp *speculation) take(ctx context.Context) *driver.Contender {
	if sp == nil {
		return nil
	}
	select {
	case <-sp.done:
		return sp.c
	case <-ctx.Done():
		sp.discard()
		return nil
	}
}

// discard deletes the speculation's node once it is made (guaranteed, off
// the caller's goroutine).
func (sp *speculation) discard() {
	if sp == nil {
		return
	}
	go func() {
		<-sp.done
		if sp.c != nil {
			sp.c.DeleteQuietly(context.Background())
		}
	}()
}
