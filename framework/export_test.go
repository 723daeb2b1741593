package framework

import (
	"context"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/go-zookeeper/zk"
)

// SetLookupHost makes each later dial of c (the re-dials after a session
// loss) resolve host names with f.
func SetLookupHost(c *Client, f func(ctx context.Context, host string) ([]string, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lookupHost = f
}

// CaptureExpiryTimers replaces the simulated-expiry timers of every client
// by timers that never fire: the callback of each timer armed is sent on
// fired instead, for the test to call when it chooses. restore undoes it.
func CaptureExpiryTimers() (fired <-chan func(), restore func()) {
	ch := make(chan func(), 64)
	afterFunc = func(_ time.Duration, f func()) *time.Timer {
		ch <- f
		return time.AfterFunc(time.Hour, func() {})
	}
	return ch, func() { afterFunc = time.AfterFunc }
}

// SetBeforeAttempt sets a hook called before each attempt of the retry
// loop, with the client and the operation's name; it returns the undo.
func SetBeforeAttempt(f func(c *Client, op string)) (restore func()) {
	old := beforeAttempt.Swap(&f)
	return func() { beforeAttempt.Store(old) }
}

// SessionFor exposes Client.sessionFor.
func SessionFor(c *Client, id int64) *Session { return c.sessionFor(id) }

// ZKConn returns c's current go-zookeeper connection.
func ZKConn(c *Client) *zk.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// ZKWatchers returns how many watches c's go-zookeeper connection holds in
// its own registry (read under its lock; wirewatch.go: it must hold none).
func ZKWatchers(c *Client) int {
	v := reflect.ValueOf(ZKConn(c)).Elem()
	mu := (*sync.Mutex)(unsafe.Pointer(v.FieldByName("watchersLock").UnsafeAddr()))
	mu.Lock()
	defer mu.Unlock()
	return v.FieldByName("watchers").Len()
}

// SetSockWriteHook sets a hook run after each write of a request on any
// client's connection, with the packet; it returns the undo.
func SetSockWriteHook(f func(p []byte)) (restore func()) {
	old := sockWriteHook.Swap(&f)
	return func() { sockWriteHook.Store(old) }
}

// SetParentReadHook sets a hook run before a parent read behind a create
// is sent (the create written); it returns the undo.
func SetParentReadHook(f func()) (restore func()) {
	old := parentReadHook.Swap(&f)
	return func() { parentReadHook.Store(old) }
}

// SetParentResultHook sets a hook run when a create that reads its parent
// behind it has its answer, before it takes the read's; it returns the
// undo.
func SetParentResultHook(f func()) (restore func()) {
	old := parentResultHook.Swap(&f)
	return func() { parentResultHook.Store(old) }
}

// SetHandleHook sets the hook the event goroutine runs before it handles
// each go-zookeeper event (it may block there); the returned func restores
// the previous one.
func SetHandleHook(f func(state zk.State)) (restore func()) {
	old := handleHook.Swap(&f)
	return func() { handleHook.Store(old) }
}

// CodeError maps a reply's error code as the own requests do.
var CodeError = codeError

// ParseMultiRead decodes a multiRead reply body of n getData results.
var ParseMultiRead = parseMultiRead

// SetMaxPersistentQueue bounds the events waiting for a persistent
// watch's function; restore undoes it.
func SetMaxPersistentQueue(n int) (restore func()) {
	old := maxPersistentQueue
	maxPersistentQueue = n
	return func() { maxPersistentQueue = old }
}

// SetConnectWriteHook sets a hook that sees each ConnectRequest written
// (length, protocolVersion, lastZxidSeen, ...); it returns the undo.
func SetConnectWriteHook(f func(p []byte)) (restore func()) {
	old := connectWriteHook.Swap(&f)
	return func() { connectWriteHook.Store(old) }
}
