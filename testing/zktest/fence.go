package zktest

import (
	"fmt"
	"sync"
)

// Fence stands in, in tests, for a resource guarded by a lock: it accepts
// work only with a fencing token higher than any it has seen (the defence a
// real resource should have against stale lock holders), and it records a
// violation whenever
//
//   - two holders are inside at once and neither had been told its lock was
//     lost, or
//   - a holder that had not been told of a loss brings a stale token.
//
// Holders that were told (their lost channel is closed) and still come are
// only counted as rejected: that is the fence doing its job.
type Fence struct {
	mu         sync.Mutex
	last       int64
	active     map[*fenceEntry]bool
	entries    int
	stale      int
	violations []string
}

type fenceEntry struct {
	who  string
	lost <-chan struct{}
}

// NewFence returns an empty Fence.
func NewFence() *Fence { return &Fence{active: map[*fenceEntry]bool{}} }

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Enter is called by a holder with its fencing token and its lock's lost
// channel. It returns ok=false (and counts a stale token) if the token is
// not higher than the last one seen; else the holder is inside until it
// calls exit.
func (f *Fence) Enter(who string, token int64, lost <-chan struct{}) (exit func(), ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if token <= f.last {
		f.stale++
		if !closed(lost) {
			f.violations = append(f.violations, fmt.Sprintf("%s brought stale token %d (last %d) without being told of a loss", who, token, f.last))
		}
		return func() {}, false
	}
	f.last = token
	e := &fenceEntry{who, lost}
	for other := range f.active {
		if !closed(other.lost) && !closed(lost) {
			f.violations = append(f.violations, fmt.Sprintf("two holders at once: %s and %s", other.who, who))
		}
	}
	f.active[e] = true
	f.entries++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.active, e)
	}, true
}

// Entries returns how many holders were let in.
func (f *Fence) Entries() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.entries
}

// Stale returns how many stale tokens were rejected.
func (f *Fence) Stale() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stale
}

// Violations returns what went wrong (nothing, if the lock kept its promise).
func (f *Fence) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.violations...)
}
