package leader

import "github.com/gocurator/curator/internal/driver"

// SetVerifyHook sets the hook an attempt runs when its node is first in
// line, before the owner check (tests only); it returns the restore func.
func SetVerifyHook(f func(node string)) (restore func()) {
	old := testHookVerify
	testHookVerify = func(c *driver.Contender) { f(c.Node()) }
	return func() { testHookVerify = old }
}

// SetEventHook sets the hook the owner runs before each event, with
// whether the event is stale (tests only).
func SetEventHook(f func(kind string, stale bool)) (restore func()) {
	old := testHookEvent
	names := map[evKind]string{evWon: "won", evFailed: "failed", evLost: "lost", evRetry: "retry"}
	testHookEvent = func(k evKind, stale bool) { f(names[k], stale) }
	return func() { testHookEvent = old }
}

// SetWonHook sets the hook a selector runs when it has won a term, before
// its function (tests only); it returns the restore func.
func SetWonHook(f func()) (restore func()) {
	old := testHookWon
	testHookWon = f
	return func() { testHookWon = old }
}

// SetTermEndedHook sets the hook a term's watcher runs once the term's
// context has ended, before it reports a loss (tests only); it returns
// the restore func.
func SetTermEndedHook(f func()) (restore func()) {
	old := testHookTermEnded
	testHookTermEnded = f
	return func() { testHookTermEnded = old }
}
