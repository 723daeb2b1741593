package framework_test

import (
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
)

// Removing a listener is safe before and after Close, twice too; a
// removed listener hears nothing more; a slow listener delays only itself.
func TestListenerRemove(t *testing.T) {
	p := startProxyFor(t)
	c, log := newRecordedClient(t, p.Addr())
	log.wait(t, testenv.WaitShort, framework.StateConnected)

	// A listener that blocks until released does not stall the others.
	release := make(chan struct{})
	slow := make(chan framework.State, 10)
	removeSlow := c.AddListener(func(s framework.State) {
		<-release
		slow <- s
	})
	removed := make(chan framework.State, 10)
	removeEarly := c.AddListener(func(s framework.State) { removed <- s })
	removeEarly()
	removeEarly()

	p.Drop()
	log.wait(t, testenv.WaitShort, framework.StateConnected, framework.StateSuspended, framework.StateReconnected)
	close(release)
	for _, want := range []framework.State{framework.StateSuspended, framework.StateReconnected} {
		select {
		case s := <-slow:
			if s != want {
				t.Fatalf("slow listener got %v, want %v", s, want)
			}
		case <-time.After(testenv.WaitShort):
			t.Fatalf("slow listener never got %v", want)
		}
	}
	select {
	case s := <-removed:
		t.Fatalf("a removed listener got %v", s)
	default:
	}

	remove := c.AddListener(func(framework.State) {})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	remove() // after Close: must not panic
	remove()
	removeSlow()
	if s := c.State(); s != framework.StateReconnected {
		t.Fatalf("State after Close = %v; Close posts nothing (no LOST, as in Curator)", s)
	}
	if got := log.get(); len(got) != 3 {
		t.Fatalf("states %v: Close must post nothing", got)
	}
}
