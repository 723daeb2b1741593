package leader

import (
	"sync"
	"sync/atomic"
)

// Listener is told of a Latch's changes of leadership (Curator's
// LeaderLatchListener): IsLeader when it starts leading, NotLeader when it
// stops. Calls come in order on one goroutine of the latch, never while
// the latch holds a lock of its own; as in Curator, leadership may have
// changed again by the time a call runs (a later call follows).
type Listener interface {
	IsLeader()
	NotLeader()
}

// ListenerFuncs is a Listener made of two functions; a nil one is skipped.
type ListenerFuncs struct {
	OnLeader    func()
	OnNotLeader func()
}

// IsLeader calls OnLeader.
func (f ListenerFuncs) IsLeader() {
	if f.OnLeader != nil {
		f.OnLeader()
	}
}

// NotLeader calls OnNotLeader.
func (f ListenerFuncs) NotLeader() {
	if f.OnNotLeader != nil {
		f.OnNotLeader()
	}
}

// dispatcher calls listeners in order on a goroutine of its own, so the
// latch never waits for them.
type dispatcher struct {
	mu        sync.Mutex
	listeners map[*Listener]struct{}
	queue     []bool // leading, per change
	signal    chan struct{}
	stopping  bool
	done      chan struct{}
	running   atomic.Bool // a callback is running now
}

func newDispatcher() *dispatcher {
	d := &dispatcher{listeners: map[*Listener]struct{}{}, signal: make(chan struct{}, 1), done: make(chan struct{})}
	go d.run()
	return d
}

func (d *dispatcher) add(l Listener) (remove func()) {
	p := &l
	d.mu.Lock()
	d.listeners[p] = struct{}{}
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.listeners, p)
		d.mu.Unlock()
	}
}

// push queues a change; it never blocks.
func (d *dispatcher) push(leading bool) {
	d.mu.Lock()
	d.queue = append(d.queue, leading)
	d.mu.Unlock()
	d.wake()
}

func (d *dispatcher) wake() {
	select {
	case d.signal <- struct{}{}:
	default:
	}
}

// stop ends the dispatcher once the changes queued are delivered, and
// waits for that unless a callback is running now (it may be the one
// calling: a listener may close its latch).
func (d *dispatcher) stop() {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	d.wake()
	if !d.running.Load() {
		<-d.done
	}
}

func (d *dispatcher) run() {
	defer close(d.done)
	for range d.signal {
		for {
			d.mu.Lock()
			if len(d.queue) == 0 {
				stopping := d.stopping
				d.mu.Unlock()
				if stopping {
					return
				}
				break
			}
			leading := d.queue[0]
			d.queue = d.queue[1:]
			ls := make([]Listener, 0, len(d.listeners))
			for p := range d.listeners {
				ls = append(ls, *p)
			}
			d.mu.Unlock()
			d.running.Store(true)
			for _, l := range ls {
				if leading {
					l.IsLeader()
				} else {
					l.NotLeader()
				}
			}
			d.running.Store(false)
		}
	}
}
