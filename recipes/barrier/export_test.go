package barrier

// SetHooks arms test hooks on d (before it enters): afterCreate, if not
// nil, runs once our member node exists and before the first count; each
// send on the returned channel wakes an Enter waiter spuriously, as
// Curator's testSpuriousWakeup does with notifyAll (a send completes only
// once the waiter took it).
func SetHooks(d *DoubleBarrier, afterCreate func()) chan<- struct{} {
	d.hooks = &hooks{afterCreate: afterCreate, wake: make(chan struct{})}
	return d.hooks.wake
}

// SetLeaveHook arms a hook on d that Leave calls before each listing after
// a wait, with whether our member node may still exist.
func SetLeaveHook(d *DoubleBarrier, beforeRelist func(ours bool)) {
	if d.hooks == nil {
		d.hooks = &hooks{}
	}
	d.hooks.beforeRelist = beforeRelist
}

// SetDeleteReadyHook arms a hook on d that Leave calls once it has read
// the ready node it may delete, just before it deletes it.
func SetDeleteReadyHook(d *DoubleBarrier, fn func()) {
	if d.hooks == nil {
		d.hooks = &hooks{}
	}
	d.hooks.beforeDeleteReady = fn
}
