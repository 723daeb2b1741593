package driver

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/internal/telemetry"
)

// lossNote tells whoever asked (OnLoss) of a holding's loss, with why it
// was lost: the recipes' telemetry counts losses by reason. A Hold keeps a
// pointer to one, made by the first OnLoss or by the loss, so that a Hold
// nobody observes costs one word.
type lossNote struct {
	mu     sync.Mutex
	lost   bool
	reason telemetry.LossReason
	fns    []func(telemetry.LossReason)
}

// lossNotePtr is the Hold's field: nil until OnLoss or the loss.
type lossNotePtr = atomic.Pointer[lossNote]

// noteOf returns h's note, making it if none yet.
func (h *Hold) noteOf() *lossNote {
	if n := h.note.Load(); n != nil {
		return n
	}
	h.note.CompareAndSwap(nil, &lossNote{})
	return h.note.Load()
}

// OnLoss arranges for f to be called once, with the reason, when the
// holding is lost; at once (on the calling goroutine) if it is lost
// already. f runs where the loss is found (a session callback, the node
// watch, a release): it must be quick and must not call back into the
// holding.
func (h *Hold) OnLoss(f func(reason telemetry.LossReason)) {
	n := h.noteOf()
	n.mu.Lock()
	if n.lost {
		r := n.reason
		n.mu.Unlock()
		f(r)
		return
	}
	n.fns = append(n.fns, f)
	n.mu.Unlock()
}

// RecordHolding starts recording the holding as one of rec's
// (rec.Holding) and has its loss recorded (OnLoss); nil, and nothing
// arranged, when rec records no holdings.
func (h *Hold) RecordHolding(rec telemetry.Recipe) *telemetry.Holding {
	t := rec.Holding()
	if t != nil {
		h.OnLoss(t.Lost)
	}
	return t
}

// noteLoss is lose's hook (once per holding): it tells OnLoss's callbacks.
func (h *Hold) noteLoss(why string) {
	r := lossReason(h, why)
	n := h.noteOf()
	n.mu.Lock()
	n.lost, n.reason = true, r
	fns := n.fns
	n.fns = nil
	n.mu.Unlock()
	for _, f := range fns {
		f(r)
	}
}

// lossReason classifies a loss: by the session first (lost, or ended by
// Close), then by what lose was told.
func lossReason(h *Hold, why string) telemetry.LossReason {
	s := h.c.session
	switch {
	case errors.Is(s.Err(), curator.ErrClosed) || why == whyClientClosed:
		return telemetry.LossClosed
	case s.Lost():
		return telemetry.LossSessionLost
	case why == whySuspended:
		return telemetry.LossSuspended
	}
	return telemetry.LossNodeDeleted
}

// What lose is told for the losses that are not about the node (lossReason
// tells them apart by these).
const (
	whySuspended    = "connection suspended"
	whyClientClosed = "the client was closed"
)
