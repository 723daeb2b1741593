package recipe

import (
	"slices"
	"testing"
)

// Listeners are called in the order they were added; a removed one, and
// a nil one, are not.
func TestListenersOrder(t *testing.T) {
	var l Listeners[int]
	var got []int
	for i := range 5 {
		remove := l.Add(func(int) { got = append(got, i) })
		if i == 2 {
			remove()
		}
	}
	l.Add(nil)
	for _, fn := range l.Snapshot() {
		fn(0)
	}
	if want := []int{0, 1, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("called %v, want %v", got, want)
	}
}
