package recipe

import (
	"slices"
	"sync"
)

// Listeners is a recipe's AddListener functions: added and removed from
// any goroutine, called by the recipe in the order they were added. The
// zero value is ready to use.
type Listeners[T any] struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(T)
}

// Add adds fn (nil is ignored); remove removes it (a call under way may
// still finish after it returns).
func (l *Listeners[T]) Add(fn func(T)) (remove func()) {
	if fn == nil {
		return func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fns == nil {
		l.fns = map[int]func(T){}
	}
	id := l.next
	l.next++
	l.fns[id] = fn
	return func() {
		l.mu.Lock()
		delete(l.fns, id)
		l.mu.Unlock()
	}
}

// Snapshot returns the functions now, in the order they were added, to
// be called without the lock.
func (l *Listeners[T]) Snapshot() []func(T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]int, 0, len(l.fns))
	for id := range l.fns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fns := make([]func(T), len(ids))
	for i, id := range ids {
		fns[i] = l.fns[id]
	}
	return fns
}
