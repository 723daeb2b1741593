package framework

// SetBeforeAttempt sets a hook called before each attempt of the retry
// loop, with the client and the operation's name; it returns the undo.
func SetBeforeAttempt(f func(c *Client, op string)) (restore func()) {
	old := beforeAttempt.Swap(&f)
	return func() { beforeAttempt.Store(old) }
}
