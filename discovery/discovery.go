package discovery

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/recipe"
	"github.com/gocurator/curator/recipes/nodes"
)

// Discovery is Curator's ServiceDiscovery (curator-x-discovery): a
// registry of services under a base path, shared with Java services that
// use Curator. The layout is Curator's:
//
//	<base>/<name>/<id>   data: the Instance, as JsonInstanceSerializer writes it
//
// with <base> and <name> made as containers. Each instance registered here
// is kept by a recipes/nodes PersistentNode: a Dynamic instance is an
// ephemeral node made again after a session loss or someone else's delete
// (with its latest data), never twice.
//
// Differences from Curator, on purpose: a reconnection of the same session
// changes nothing (Curator deletes and makes every instance again on each
// reconnection, and services flap: CURATOR-320); a node at the instance's
// path owned by another live session (a second process with the same id,
// or this process's previous run whose session has not expired yet) is
// waited for, never deleted (Curator deletes it, and two processes with
// one id take turns); Names on a base path nothing registered under yet is
// empty, not an error; a DynamicSequential instance's actual path is kept
// (see ServiceType). All methods are safe for concurrent use.
type Discovery[T any] struct {
	client *framework.Client
	base   string
	o      options

	mu     sync.Mutex
	regs   map[string]*registration[T] // by id
	closed bool
}

type registration[T any] struct {
	inst Instance[T]
	node *nodes.PersistentNode
	done func()        // ends the node's labelling as a registration (metrics.go)
	made chan struct{} // closed once the first create is done (or failed)
	err  error         // why it failed, set before made is closed
}

// New returns a Discovery of the services under basePath (Curator's
// ServiceDiscoveryBuilder.basePath). Nothing is read or written before a
// call. Errors wrap curator.ErrInvalidArgument.
func New[T any](client *framework.Client, basePath string, opts ...Option) (*Discovery[T], error) {
	if err := recipe.CheckArgs(client, "discovery", basePath); err != nil {
		return nil, err
	}
	var o options
	if err := recipe.Apply(&o, opts); err != nil {
		return nil, err
	}
	return &Discovery[T]{client: client, base: basePath, o: o, regs: map[string]*registration[T]{}}, nil
}

// Register registers inst (Curator's registerService) and returns it as
// registered: its ID a random UUID if empty, its RegistrationTime now if
// zero, its ServiceType Dynamic if empty. It returns once the node is made,
// or ctx ends (then the registration is undone: nothing changed). An id
// already registered here is updated in place (Update), if its name and
// service type are the same.
//
// A node at the instance's path owned by another live session is waited
// for (the error on ctx's end wraps curator.ErrLocked), never deleted; a
// persistent node there (Static, Permanent: this service's earlier run) is
// taken over and written.
func (d *Discovery[T]) Register(ctx context.Context, inst Instance[T]) (Instance[T], error) {
	if ctx == nil {
		return inst, recipe.ErrNilContext
	}
	if inst.ID == "" {
		inst.ID = framework.NewProtectedID()
	}
	if inst.RegistrationTime.IsZero() {
		inst.RegistrationTime = time.UnixMilli(time.Now().UnixMilli()).UTC()
	}
	if inst.ServiceType == "" {
		inst.ServiceType = Dynamic
	}
	if err := inst.check(); err != nil {
		return inst, err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return inst, fmt.Errorf("discovery %s: register %s: %w", d.base, inst.ID, curator.ErrClosed)
	}
	if d.regs[inst.ID] != nil {
		d.mu.Unlock()
		return inst, d.Update(ctx, inst)
	}
	data, err := inst.Marshal(d.o.enc)
	if err != nil {
		d.mu.Unlock()
		return inst, fmt.Errorf("discovery: register %s: %v: %w", inst.ID, err, curator.ErrInvalidArgument)
	}
	mode := map[ServiceType]framework.CreateMode{Dynamic: framework.ModeEphemeral,
		DynamicSequential: framework.ModeEphemeralSequential,
		Static:            framework.ModePersistent, Permanent: framework.ModePersistent}[inst.ServiceType]
	p := d.instancePath(inst.Name, inst.ID)
	node, err := nodes.NewPersistentNode(d.client, p, data, nodes.WithMode(mode))
	if err != nil {
		d.mu.Unlock()
		return inst, err
	}
	r := &registration[T]{inst: inst, node: node, done: d.labelled(p, inst.Name), made: make(chan struct{})}
	d.regs[inst.ID] = r
	d.mu.Unlock()

	if err := node.Start(); err == nil {
		err = node.WaitForInitialCreate(ctx)
		r.err = err
	} else {
		r.err = err
	}
	close(r.made)
	if r.err != nil {
		d.mu.Lock()
		if d.regs[inst.ID] == r {
			delete(d.regs, inst.ID)
		}
		d.mu.Unlock()
		_ = r.close()
		return inst, fmt.Errorf("discovery %s: register %s/%s: %w", d.base, inst.Name, inst.ID, r.err)
	}
	return inst, nil
}

// Update writes inst over the instance registered here with its id
// (Curator's updateService): it returns once the node holds it, or ctx
// ends (it is still written later, and after every re-creation). An id not
// registered here: curator.ErrNotHeld; another name or service type than
// registered: curator.ErrInvalidArgument.
func (d *Discovery[T]) Update(ctx context.Context, inst Instance[T]) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	r, err := d.registered(ctx, inst.ID)
	if err != nil {
		return err
	}
	if inst.ServiceType == "" {
		inst.ServiceType = r.inst.ServiceType
	}
	if inst.RegistrationTime.IsZero() {
		inst.RegistrationTime = r.inst.RegistrationTime
	}
	if err := inst.check(); err != nil {
		return err
	}
	if inst.Name != r.inst.Name || inst.ServiceType != r.inst.ServiceType {
		return fmt.Errorf("discovery: update %s: registered as %s (%s), not %s (%s): %w",
			inst.ID, r.inst.Name, r.inst.ServiceType, inst.Name, inst.ServiceType, curator.ErrInvalidArgument)
	}
	data, err := inst.Marshal(d.o.enc)
	if err != nil {
		return fmt.Errorf("discovery: update %s: %v: %w", inst.ID, err, curator.ErrInvalidArgument)
	}
	d.mu.Lock()
	r.inst = inst
	d.mu.Unlock()
	if err := r.node.SetData(ctx, data); err != nil {
		return fmt.Errorf("discovery %s: update %s/%s: %w", d.base, inst.Name, inst.ID, err)
	}
	return nil
}

// registered returns the registration of id once its first create is
// done.
func (d *Discovery[T]) registered(ctx context.Context, id string) (*registration[T], error) {
	d.mu.Lock()
	r, closed := d.regs[id], d.closed
	d.mu.Unlock()
	switch {
	case closed:
		return nil, fmt.Errorf("discovery %s: instance %q: %w", d.base, id, curator.ErrClosed)
	case r == nil:
		return nil, fmt.Errorf("discovery %s: instance %q: %w: not registered here", d.base, id, curator.ErrNotHeld)
	}
	select {
	case <-r.made:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.err != nil {
		return nil, fmt.Errorf("discovery %s: instance %q: %w: its registration failed", d.base, id, curator.ErrNotHeld)
	}
	return r, nil
}

// Unregister removes the instance registered here with id (Curator's
// unregisterService), whatever its service type: its node is deleted
// (guaranteed: a delete that cannot finish now goes on in the background).
// An id not registered here: curator.ErrNotHeld.
func (d *Discovery[T]) Unregister(ctx context.Context, id string) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	r, err := d.registered(ctx, id)
	if err != nil {
		return err
	}
	d.mu.Lock()
	if d.regs[id] != r {
		d.mu.Unlock()
		return fmt.Errorf("discovery %s: instance %q: %w: not registered here", d.base, id, curator.ErrNotHeld)
	}
	delete(d.regs, id)
	d.mu.Unlock()
	return r.close()
}

// close deletes the registration's node.
func (r *registration[T]) close() error {
	err := r.node.Close()
	r.done()
	return err
}

// Registered returns the instances registered here, by id (Curator's
// local map), as last registered or updated.
func (d *Discovery[T]) Registered() map[string]Instance[T] {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := make(map[string]Instance[T], len(d.regs))
	for id, r := range d.regs {
		select {
		case <-r.made:
			if r.err == nil {
				m[id] = r.inst
			}
		default:
		}
	}
	return m
}

// Names returns the names of the services registered under the base path,
// sorted (Curator's queryForNames); none when nothing was ever registered
// there (Curator throws).
func (d *Discovery[T]) Names(ctx context.Context) ([]string, error) {
	names, _, err := d.client.Children(ctx, d.base)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery %s: names: %w", d.base, err)
	}
	sort.Strings(names)
	return names, nil
}

// Instances returns every instance of the service name, read from
// ZooKeeper now (Curator's queryForInstances), sorted by id: the listing,
// then each instance's read, in parallel. An instance gone meanwhile is
// left out; one whose bytes are no instance is an error (as in Curator).
// For frequent reads use a Cache.
func (d *Discovery[T]) Instances(ctx context.Context, name string) ([]Instance[T], error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	dir := path.Join(d.base, name)
	ids, _, err := d.client.Children(ctx, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return []Instance[T]{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery %s: instances of %s: %w", d.base, name, err)
	}
	found := make([]*Instance[T], len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, id := range ids {
		g.Go(func() error {
			in, err := d.read(gctx, path.Join(dir, id))
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			found[i] = in
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("discovery %s: instances of %s: %w", d.base, name, err)
	}
	out := make([]Instance[T], 0, len(found))
	for _, in := range found {
		if in != nil {
			out = append(out, *in)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Instance returns the instance id of the service name, read from
// ZooKeeper now (Curator's queryForInstance). None there: an error wrapping
// zk.ErrNoNode (Curator returns null).
func (d *Discovery[T]) Instance(ctx context.Context, name, id string) (Instance[T], error) {
	if err := checkName(name); err != nil {
		return Instance[T]{}, err
	}
	if err := checkName(id); err != nil {
		return Instance[T]{}, err
	}
	in, err := d.read(ctx, d.instancePath(name, id))
	if err != nil {
		return Instance[T]{}, fmt.Errorf("discovery %s: instance %s/%s: %w", d.base, name, id, err)
	}
	return *in, nil
}

func (d *Discovery[T]) read(ctx context.Context, p string) (*Instance[T], error) {
	data, _, err := d.client.Get(ctx, p)
	if err != nil {
		return nil, err
	}
	var in Instance[T]
	if err := in.Unmarshal(data); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &in, nil
}

// Close unregisters every instance registered here (Curator's close: their
// nodes are deleted, whatever their service type) and makes every later
// call fail with curator.ErrClosed. Caches and providers made from it are
// the caller's to close. Closing twice is a no-op.
func (d *Discovery[T]) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	regs := d.regs
	d.regs = map[string]*registration[T]{}
	d.mu.Unlock()
	var errs []error
	for _, r := range regs {
		errs = append(errs, r.close())
	}
	return errors.Join(errs...)
}

func (d *Discovery[T]) instancePath(name, id string) string { return path.Join(d.base, name, id) }

// servicePath is where the instances of name live.
func (d *Discovery[T]) servicePath(name string) string { return path.Join(d.base, name) }

func checkName(s string) error {
	in := Instance[struct{}]{Name: s, ID: s}
	return in.check()
}
