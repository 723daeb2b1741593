package framework

import "github.com/gocurator/curator"

// SetProtectedRetryHook sets protectedRetryHook for one test.
func SetProtectedRetryHook(f func()) (restore func()) {
	protectedRetryHook = f
	return func() { protectedRetryHook = nil }
}

// DeclareSessionLost makes the client declare its session lost, as its
// simulated expiration does (onExpireTimerLocked) before it opens a new
// handle, while the server still keeps the session.
func DeclareSessionLost(c *Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loseSessionLocked(curator.ErrSessionLost)
}

// SetParentsHook sets testHookParents for one test.
func SetParentsHook(f func(full string)) (restore func()) {
	testHookParents = f
	return func() { testHookParents = nil }
}
