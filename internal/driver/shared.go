package driver

import (
	"context"
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// queueW reads the contenders with a child watch set by the same read.
func (d *Driver) queueW(ctx context.Context) (*Queue, *framework.Watch, error) {
	names, st, w, err := d.client.ChildrenW(ctx, d.path)
	if errors.Is(err, zk.ErrNoNode) {
		return &Queue{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return d.queueOf(names, st.Czxid), w, nil
}

// queueShared reads the contenders through a read shared with every other
// waiter of the same client and path that asks meanwhile (a thousand
// waiters of one lock in one process), sorted once per answer for all
// drivers of the same contender names.
func (d *Driver) queueShared(ctx context.Context) (*Queue, error) {
	f, err := reads.read(ctx, d.client, d.path)
	if errors.Is(err, zk.ErrNoNode) {
		return &Queue{}, nil
	}
	if err != nil {
		return nil, err
	}
	return f.queue(d), nil
}

// readKey names the reads that can be shared: one client's, of one path.
type readKey struct {
	client *framework.Client
	path   string
}

// sharedReads coalesces concurrent getChildren of one path by one client.
// At most one read per key is in flight; callers that arrive while it is
// share the next one, sent once it is done, so what a caller gets is never
// older than its call (it sees its own writes). A read is made by one of
// its callers, on that caller's goroutine and with its context: no
// goroutine is started, and nothing is left once the last caller returns.
type sharedReads struct {
	mu   sync.Mutex
	keys map[readKey]*pathReads
}

var reads = &sharedReads{keys: map[readKey]*pathReads{}}

// Test hooks, set only by tests: testHookRead runs just before a shared
// read is sent, with the sender's context; testHookWoke when a caller that
// waited for an earlier read wakes, with its context, before it looks
// again; testHookIdle when a sender has ended its read; testHookShared when
// a caller finds its read ended by a context, before it looks at its own.
var (
	testHookRead   func(ctx context.Context)
	testHookWoke   func(ctx context.Context)
	testHookIdle   func()
	testHookShared func(ctx context.Context)
)

type pathReads struct {
	running *flight // the read in flight, if any
	next    *flight // the read the callers arriving now will share, not sent yet
}

// flight is one read and everyone who shares it.
type flight struct {
	done  chan struct{} // closed once names and err are set
	names []string
	err   error
	czxid int64 // the path's czxid in the answer (its incarnation)
	users int   // callers waiting for it to be sent

	mu     sync.Mutex
	first  keyedQueue   // the answer sorted for the first contender-name set asking (usually the only one)
	others []keyedQueue // and for any other
}

type keyedQueue struct {
	key string
	q   *Queue
}

// queue returns the answer as d sees it, sorted once for every driver of
// the same contender names.
func (f *flight) queue(d *Driver) *Queue {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first.q != nil && f.first.key == d.key {
		return f.first.q
	}
	for _, kq := range f.others {
		if kq.key == d.key {
			return kq.q
		}
	}
	q := d.queueOf(f.names, f.czxid)
	if f.first.q == nil {
		f.first = keyedQueue{d.key, q}
	} else {
		f.others = append(f.others, keyedQueue{d.key, q})
	}
	return q
}

// read returns a flight, done, whose read was sent after read was called.
func (s *sharedReads) read(ctx context.Context, c *framework.Client, path string) (*flight, error) {
	key := readKey{c, path}
	for {
		f, err := s.join(ctx, key)
		if err != nil {
			return nil, err
		}
		if f.err != nil && isCtxErr(f.err) {
			if testHookShared != nil {
				testHookShared(ctx)
			}
			// Ended by a context: ours if it has ended (its error, never
			// the maker's: a caller whose deadline passed is told so even
			// if a sharer cancelled the read meanwhile), else the maker's:
			// share another.
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		return f, f.err
	}
}

// join waits until the next flight of key has been made, making it itself
// when its turn comes and nobody else has.
func (s *sharedReads) join(ctx context.Context, key readKey) (*flight, error) {
	s.mu.Lock()
	pr := s.keys[key]
	if pr == nil {
		pr = &pathReads{}
		s.keys[key] = pr
	}
	f := pr.next
	if f == nil {
		f = &flight{done: make(chan struct{})}
		pr.next = f
	}
	f.users++
	for {
		switch pr.running {
		case nil: // nothing in flight: send f now, ourselves
			pr.running, pr.next = f, nil
			f.users = 0
			s.mu.Unlock()
			if testHookRead != nil {
				testHookRead(ctx)
			}
			var st *framework.Stat
			f.names, st, f.err = key.client.Children(ctx, key.path)
			if f.err == nil {
				f.czxid = st.Czxid
			}
			s.mu.Lock()
			// Done, then idle, in one step: a sharer that finds the path
			// idle must find f done too, or it would send f again.
			close(f.done)
			pr.running = nil
			if pr.next == nil {
				delete(s.keys, key)
			}
			s.mu.Unlock()
			if testHookIdle != nil {
				testHookIdle()
			}
			return f, nil
		case f: // another caller sends it
			s.mu.Unlock()
			select {
			case <-f.done:
				return f, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		// An earlier read is in flight: f goes once it is done.
		prev := pr.running
		s.mu.Unlock()
		select {
		case <-prev.done:
			if testHookWoke != nil {
				testHookWoke(ctx)
			}
		case <-ctx.Done():
			s.mu.Lock()
			if pr.next == f {
				if f.users--; f.users == 0 {
					pr.next = nil // nobody wants it any more
					if pr.running == nil {
						delete(s.keys, key)
					}
				}
			}
			s.mu.Unlock()
			return nil, ctx.Err()
		}
		s.mu.Lock()
		select {
		case <-f.done: // sent and answered meanwhile
			s.mu.Unlock()
			return f, nil
		default:
		}
	}
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
