package cache

// SetRetryHook arms fn (before Start) to run on c's goroutine that waits
// to run a failed read again, with the read's path, before it is queued:
// a test holds the cache there, with no read in flight.
func SetRetryHook(c *Cache, fn func(path string)) {
	c.hookRetry = func(t task) { fn(t.path) }
}

// SetDefaultOneShot makes New use one-shot watches (or not) by default;
// restore undoes it.
func SetDefaultOneShot(on bool) (restore func()) {
	old := defaultOneShot
	defaultOneShot = on
	return func() { defaultOneShot = old }
}

// DefaultOneShot reports whether New uses one-shot watches by default.
func DefaultOneShot() bool { return defaultOneShot }

// SetAddWatchHook arms fn (before Start) to run before each addWatch of
// c; an error it returns stands for the server's answer (a server before
// ZooKeeper 3.6: curator.ErrUnimplemented).
func SetAddWatchHook(c *Cache, fn func() error) { c.hookAddWatch = fn }
