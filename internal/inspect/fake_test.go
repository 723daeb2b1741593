package inspect

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// fakeNode is one node of a fake tree.
type fakeNode struct {
	data    []byte
	stat    framework.Stat
	noAuth  bool // Get and Children refused
	kidsErr error
}

// fake is an in-memory ZooKeeper tree: a Source and WatchSource for unit
// tests.
type fake struct {
	mu       sync.Mutex
	nodes    map[string]*fakeNode
	zxid     int64
	gets     map[string]int
	watchers []*fakeWatch
	// onChildren runs after a Children read of path has listed its
	// children (to delete one before it is read).
	onChildren func(path string)
	// onGet runs after a Get of path has read it.
	onGet func(path string)
}

func newFake() *fake {
	f := &fake{nodes: map[string]*fakeNode{"/": {}}, gets: map[string]int{}}
	return f
}

// add makes a node (parents as needed) with data, owned by session (0:
// persistent), created at ctime (ms).
func (f *fake) add(path string, data string, session int64, ctime int64) *fakeNode {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p := framework.ParentPath(path); p != "/"; p = framework.ParentPath(p) {
		if f.nodes[p] == nil {
			f.zxid++
			f.nodes[p] = &fakeNode{stat: framework.Stat{Czxid: f.zxid}}
		}
	}
	f.zxid++
	n := &fakeNode{data: []byte(data), stat: framework.Stat{Czxid: f.zxid, EphemeralOwner: session, Ctime: ctime}}
	f.nodes[path] = n
	return n
}

func (f *fake) remove(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.nodes, path)
}

func (f *fake) Get(ctx context.Context, p string) ([]byte, *framework.Stat, error) {
	data, st, err := f.get(p)
	if f.onGet != nil {
		f.onGet(p)
	}
	return data, st, err
}

func (f *fake) get(p string) ([]byte, *framework.Stat, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets[p]++
	n := f.nodes[p]
	if n == nil {
		return nil, nil, zk.ErrNoNode
	}
	if n.noAuth {
		return nil, nil, zk.ErrNoAuth
	}
	st := n.stat
	return append([]byte(nil), n.data...), &st, nil
}

func (f *fake) Children(_ context.Context, p string) ([]string, *framework.Stat, error) {
	kids, st, err := f.children(p)
	if err == nil && f.onChildren != nil {
		f.onChildren(p)
	}
	return kids, st, err
}

func (f *fake) children(p string) ([]string, *framework.Stat, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.nodes[p]
	if n == nil {
		return nil, nil, zk.ErrNoNode
	}
	if n.noAuth {
		return nil, nil, zk.ErrNoAuth
	}
	if n.kidsErr != nil {
		return nil, nil, n.kidsErr
	}
	var kids []string
	prefix := strings.TrimSuffix(p, "/") + "/"
	for q := range f.nodes {
		if q != "/" && strings.HasPrefix(q, prefix) && !strings.Contains(q[len(prefix):], "/") {
			kids = append(kids, q[len(prefix):])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(kids))) // the server's order is no order
	st := n.stat
	return kids, &st, nil
}

type fakeWatch struct {
	path    string
	ch      chan framework.Event
	mu      sync.Mutex
	stopped bool
}

func (w *fakeWatch) C() <-chan framework.Event { return w.ch }
func (w *fakeWatch) Stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}

func (f *fake) watch(p string) *fakeWatch {
	w := &fakeWatch{path: p, ch: make(chan framework.Event, 1)}
	f.mu.Lock()
	f.watchers = append(f.watchers, w)
	f.mu.Unlock()
	return w
}

func (f *fake) ChildrenW(ctx context.Context, p string) ([]string, *framework.Stat, Watcher, error) {
	kids, st, err := f.Children(ctx, p)
	if err != nil {
		return nil, nil, nil, err
	}
	return kids, st, f.watch(p), nil
}

func (f *fake) ExistsW(_ context.Context, p string) (bool, *framework.Stat, Watcher, error) {
	f.mu.Lock()
	n := f.nodes[p]
	f.mu.Unlock()
	w := f.watch(p)
	if n == nil {
		return false, nil, w, nil
	}
	st := n.stat
	return true, &st, w, nil
}

func (f *fake) BlockUntilConnected(context.Context) error { return nil }

// fire delivers an event to every watch not yet fired or stopped.
func (f *fake) fire() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, w := range f.watchers {
		select {
		case w.ch <- framework.Event{Type: framework.EventNodeChildrenChanged, Path: w.path}:
			n++
		default:
		}
	}
	return n
}

// live counts the watches not stopped.
func (f *fake) live() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, w := range f.watchers {
		w.mu.Lock()
		if !w.stopped {
			n++
		}
		w.mu.Unlock()
	}
	return n
}
