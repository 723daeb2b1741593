package driver

import "context"

// SharedReadKeys returns how many (client, path) keys the shared reads
// keep: 0 once no read is in flight or wanted.
func SharedReadKeys() int {
	reads.mu.Lock()
	defer reads.mu.Unlock()
	return len(reads.keys)
}

// SortOnly returns a driver that can only sort (no client), for fuzzing.
func SortOnly(names ...string) *Driver { return &Driver{name: names[0], names: names} }

// SharedReadWaiters returns how many callers wait for a shared read that
// is not sent yet.
func SharedReadWaiters() int {
	reads.mu.Lock()
	defer reads.mu.Unlock()
	n := 0
	for _, pr := range reads.keys {
		if pr.next != nil {
			n += pr.next.users
		}
	}
	return n
}

// SetReadHook sets the hook run just before a shared read is sent, with
// the sender's context; the returned func removes it.
func SetReadHook(f func(ctx context.Context)) (restore func()) {
	testHookRead = f
	return func() { testHookRead = nil }
}

// HandoffKeys returns how many paths the handoff keeps: 0 once nobody
// waits.
func HandoffKeys() int {
	process.mu.Lock()
	defer process.mu.Unlock()
	return len(process.keys)
}

// HandoffOn reports whether d's waiters may hand off.
func HandoffOn(d *Driver) bool { return d.handoff }

// QueueOf exposes the sorting of a read.
func (d *Driver) QueueOf(children []string) *Queue { return d.queueOf(children, 0) }

// SetSharedEndHook sets the hook run when a caller finds its shared read
// ended by a context, before it looks at its own; the returned func
// removes it.
func SetSharedEndHook(f func(ctx context.Context)) (restore func()) {
	testHookShared = f
	return func() { testHookShared = nil }
}

// SetReadHooks sets the shared reads' woke and idle hooks; the returned
// func removes them.
func SetReadHooks(woke func(ctx context.Context), idle func()) (restore func()) {
	testHookWoke, testHookIdle = woke, idle
	return func() { testHookWoke, testHookIdle = nil, nil }
}

// SetLosingHook sets the hook a loss runs between ending the held context
// and closing Lost; the returned func removes it.
func SetLosingHook(f func(h *Hold)) (restore func()) {
	testHookLosing = f
	return func() { testHookLosing = nil }
}

// SetNodeWatchHook sets the hook the node watch of a Hold runs each time
// its watch is armed; the returned func restores the previous one. Set it
// only while no Hold watches.
func SetNodeWatchHook(f func(node string)) (restore func()) {
	old := testHookNodeWatch
	testHookNodeWatch = f
	return func() { testHookNodeWatch = old }
}

// HandoffGone returns how many gone names the handoff keeps in all.
func HandoffGone() int {
	process.mu.Lock()
	defer process.mu.Unlock()
	n := 0
	for _, h := range process.keys {
		n += len(h.gone)
	}
	return n
}

// SetGoneMin sets how many gone names a handoff entry keeps at least; the
// returned func restores it. Set it only while nobody waits.
func SetGoneMin(n int) (restore func()) {
	old := goneMin
	goneMin = n
	return func() { goneMin = old }
}

// JoinHandoff registers one more waiter on d's client and path in the
// handoff, as another waiter of the process would be, so that what the
// process knows is kept; the returned func leaves.
func (d *Driver) JoinHandoff() (leave func()) {
	h, at := d.handoffs.join(d.client, d.path, "")
	return func() { d.handoffs.leave(h, at) }
}

// KnowsGone reports whether d's process knows the contender name of d's
// path gone, in any incarnation of the path.
func (d *Driver) KnowsGone(name string) bool {
	d.handoffs.mu.Lock()
	defer d.handoffs.mu.Unlock()
	h := d.handoffs.keys[handoffKey{d.client, d.path}]
	if h == nil {
		return false
	}
	for k := range h.gone {
		if k.name == name {
			return true
		}
	}
	return false
}

// OtherProcess makes d's contenders another process's: what d's process
// knows of its path (handoff.go) is d's own, shared with no other Driver.
// Call it before d is used.
func (d *Driver) OtherProcess() { d.handoffs = newHandoffs() }

// SawGone tells what d's process knows of its path that d's client saw
// the contender name of the path's incarnation czxid go, as a waiter's
// watch does.
func (d *Driver) SawGone(czxid int64, name string) { d.handoffs.deleted(d.client, d.path, czxid, name) }

// Unlisted drops what c's create read of the queue, so that its first
// decision reads it, as a contender whose create made no parent read does
// (several creates of one client in flight at once): the shared-read
// tests need such readers.
func Unlisted(c *Contender) *Contender {
	c.listed, c.siblings = nil, 0
	return c
}
