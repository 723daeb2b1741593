package inspect

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// DefaultMaxNodes bounds the nodes one Read fetches unless told otherwise.
const DefaultMaxNodes = 10000

// defaultParallel is how many requests a Read keeps in flight.
const defaultParallel = 8

// Options bound a Read.
type Options struct {
	// MaxNodes is the most nodes read (0: DefaultMaxNodes); past it the
	// tree is cut and the read reports it.
	MaxNodes int
	// MaxDepth: 0 reads the whole subtree; 1 the node and its children
	// (their own children are left Unread), and so on.
	MaxDepth int
	// Skip: paths whose children are not read ("/zookeeper", the server's
	// own, when inspecting "/").
	Skip []string
	// Parallel is how many requests are in flight at once (0: 8).
	Parallel int
}

// Read fetches the subtree at path: every node's stat and data, and the
// children of every persistent node. An error on path itself is returned
// (IsNotFound when it does not exist, IsNoAuth when it may not be read).
// Below it, a node deleted meanwhile is left out, one that may not be read
// keeps its Err, and any other error ends the read. truncated says the
// node limit cut the tree.
func Read(ctx context.Context, src Source, path string, o Options) (root *Znode, truncated bool, err error) {
	root, truncated, _, err = read(ctx, src, nil, path, o)
	return root, truncated, err
}

// read is Read that, given ws, also sets a child watch on every persistent
// node whose children it reads (by the same request), and returns them.
func read(ctx context.Context, src Source, ws WatchSource, path string, o Options) (*Znode, bool, []Watcher, error) {
	data, st, err := src.Get(ctx, path)
	if err != nil {
		return nil, false, nil, err
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	if o.Parallel <= 0 {
		o.Parallel = defaultParallel
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &reader{src: src, ws: ws, o: o, sem: make(chan struct{}, o.Parallel), cancel: cancel}
	root := &Znode{Path: path, Name: framework.NodeName(path), Stat: st, Data: data}
	r.count.Store(1)
	r.wg.Add(1)
	go r.fill(ctx, root, 0)
	r.wg.Wait()
	err = r.err
	if err == nil && root.gone { // deleted after its own read (a container reaped, say): as if before
		err = fmt.Errorf("inspect: %s: %w", path, zk.ErrNoNode)
	}
	if err != nil {
		for _, w := range r.watches {
			w.Stop()
		}
		return nil, false, nil, err
	}
	prune(root)
	return root, r.truncated.Load(), r.watches, nil
}

type reader struct {
	src    Source
	ws     WatchSource
	o      Options
	sem    chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup

	count     atomic.Int64
	truncated atomic.Bool

	mu      sync.Mutex
	err     error // the first error that ends the read
	watches []Watcher
}

func (r *reader) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.cancel()
}

// do runs one request within the limit of requests in flight.
func (r *reader) do(ctx context.Context, f func()) bool {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		r.fail(ctx.Err())
		return false
	}
	defer func() { <-r.sem }()
	f()
	return true
}

// fill reads z's children (z's own stat and data are read) and, for each,
// its stat, data and children, in parallel. It ends r.wg's count for z.
func (r *reader) fill(ctx context.Context, z *Znode, depth int) {
	defer r.wg.Done()
	if z.ephemeral() {
		return // an ephemeral node has no children
	}
	if (r.o.MaxDepth > 0 && depth >= r.o.MaxDepth) || slices.Contains(r.o.Skip, z.Path) {
		z.Unread = true
		return
	}
	var names []string
	var err error
	if !r.do(ctx, func() {
		if r.ws != nil {
			var w Watcher
			names, _, w, err = r.ws.ChildrenW(ctx, z.Path)
			if err == nil {
				r.mu.Lock()
				r.watches = append(r.watches, w)
				r.mu.Unlock()
			}
		} else {
			names, _, err = r.src.Children(ctx, z.Path)
		}
	}) {
		return
	}
	switch {
	case IsNotFound(err):
		z.gone = true
		return
	case IsNoAuth(err):
		z.Err = err
		return
	case err != nil:
		r.fail(err)
		return
	}
	slices.Sort(names)
	// All of a node's children or none: a queue read in part would name
	// the wrong holder.
	if r.count.Add(int64(len(names))) > int64(r.o.MaxNodes) {
		r.truncated.Store(true)
		z.Unread = true
		return
	}
	for _, n := range names {
		z.Children = append(z.Children, &Znode{Path: framework.JoinPath(z.Path, n), Name: n})
	}
	for _, c := range z.Children {
		r.wg.Add(1)
		go func() {
			var err error
			if !r.do(ctx, func() { c.Data, c.Stat, err = r.src.Get(ctx, c.Path) }) {
				r.wg.Done()
				return
			}
			switch {
			case IsNotFound(err):
				c.gone = true
				r.wg.Done()
				return
			case IsNoAuth(err):
				c.Err = err
				r.wg.Done()
				return
			case err != nil:
				r.fail(err)
				r.wg.Done()
				return
			}
			r.fill(ctx, c, depth+1)
		}()
	}
}

// prune drops the nodes deleted while the tree was read.
func prune(z *Znode) {
	z.Children = slices.DeleteFunc(z.Children, func(c *Znode) bool { return c.gone })
	for _, c := range z.Children {
		prune(c)
	}
	if z.gone {
		z.Unread = true
	}
}
