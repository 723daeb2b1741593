package barrier

import "errors"

// Sentinel errors of the barrier recipes. Every error returned wraps one of
// these, a context error, or a framework/ZooKeeper error, so errors.Is works:
// a session lost while waiting wraps framework.ErrSessionLost, a closed
// client framework.ErrClosed.
var (
	// ErrInvalidArgument: nil client or context, invalid path, memberQty <= 0.
	ErrInvalidArgument = errors.New("barrier: invalid argument")
	// ErrMemberVanished: our member node of a DoubleBarrier disappeared while
	// we were in the barrier: its session was lost (the error then also wraps
	// framework.ErrSessionLost) or someone deleted it. We are no longer
	// counted, so waiting on is pointless (Curator: "Our path (%s) is
	// missing").
	ErrMemberVanished = errors.New("barrier: our member node vanished")
	// ErrNotEntered: Leave on a DoubleBarrier that is not in the barrier
	// (Enter was not called, failed, or Leave already ran).
	ErrNotEntered = errors.New("barrier: not entered")
	// ErrAlreadyEntered: Enter on a DoubleBarrier that is already in the
	// barrier, or entering or leaving it on another goroutine. One
	// DoubleBarrier is one member; make one per member.
	ErrAlreadyEntered = errors.New("barrier: already entered")
)
