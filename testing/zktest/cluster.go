package zktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster is an ensemble of N ZooKeeper servers on loopback (curator-test
// TestingCluster). Each member is a *Server whose Stop, Start, Restart,
// Mode and four-letter helpers work on that member alone. All methods are
// safe for concurrent use.
type Cluster struct {
	root    string
	members []*Server
	cfg     *config

	mu     sync.Mutex
	closed bool
}

// NewCluster starts an n-member ensemble (n >= 1) on free loopback ports:
// each member gets a client, a quorum and an election port
// (server.i=127.0.0.1:quorum:election) and its own data directory with a
// myid file. All members start at once; NewCluster returns when every
// member serves as leader or follower (a one-member cluster runs as a
// quorum of one, Mode "leader", not standalone).
func NewCluster(n int, opts ...Option) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("zktest: NewCluster(%d): need at least one member", n)
	}
	cfg, inst, root, err := prepare("zktest-cluster-", opts)
	if err != nil {
		return nil, err
	}
	c := &Cluster{root: root, cfg: cfg}
	for attempt := 1; ; attempt++ {
		err = c.tryStart(inst, n)
		if err == nil {
			return c, nil
		}
		for _, m := range c.members {
			m.stop()
			releaseAll(m.leases)
		}
		if !errors.Is(err, errBind) || attempt >= 3 {
			os.RemoveAll(root)
			return nil, err
		}
	}
}

func (c *Cluster) tryStart(inst *install, n int) error {
	leases, err := reservePorts(3 * n)
	if err != nil {
		return err
	}
	servers := make([]string, n)
	for i := range n {
		servers[i] = fmt.Sprintf("server.%d=127.0.0.1:%d:%d", i+1, leases[3*i+1].port, leases[3*i+2].port)
	}
	c.members = make([]*Server, n)
	for i := range n {
		c.members[i] = &Server{cfg: c.cfg, inst: inst, dir: filepath.Join(c.root, "n"+strconv.Itoa(i+1)),
			port: leases[3*i].port, leases: leases[3*i : 3*i+3 : 3*i+3], member: &member{id: i + 1, servers: servers}}
	}
	for _, m := range c.members {
		os.RemoveAll(m.dir) // a previous attempt's
		if err := os.MkdirAll(m.dataDir(), 0o755); err != nil {
			return fmt.Errorf("zktest: %w", err)
		}
		if err := m.writeConfig(); err != nil {
			return err
		}
	}
	procs := make([]*process, n)
	for i, m := range c.members {
		if procs[i], err = m.launch(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.startTimeout)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range c.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = m.await(ctx, procs[i], quorumMode); errs[i] != nil {
				cancel() // no quorum for the others either
				errs[i] = fmt.Errorf("member %d: %w", i+1, errs[i])
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if errors.Is(e, errBind) {
			return e
		}
	}
	for _, e := range errs {
		if e != nil && !errors.Is(e, context.Canceled) {
			return e
		}
	}
	return errors.Join(errs...)
}

// StartCluster is NewCluster for tests: tb.Fatal on error (naming the fix
// when ZooKeeper is missing) and Close registered with tb.Cleanup.
func StartCluster(tb testing.TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	c, err := NewCluster(n, opts...)
	return started(tb, "ensemble", c, err)
}

// ConnectString returns "127.0.0.1:p1,127.0.0.1:p2,..." for all members,
// running or not.
func (c *Cluster) ConnectString() string {
	addrs := make([]string, len(c.members))
	for i, m := range c.members {
		addrs[i] = m.Addr()
	}
	return strings.Join(addrs, ",")
}

// Members returns the members in myid order (index i has myid i+1). The
// slice is a copy; the *Server values are the cluster's own.
func (c *Cluster) Members() []*Server {
	return append([]*Server(nil), c.members...)
}

// Leader returns the index in Members of the member whose srvr reports
// "leader", or an error if no running member does (for example during an
// election).
func (c *Cluster) Leader() (int, error) {
	for i, m := range c.members {
		if !m.Running() {
			continue
		}
		if mode, err := m.Mode(); err == nil && mode == "leader" {
			return i, nil
		}
	}
	return -1, errors.New("zktest: no member is leader")
}

// WaitQuorum waits until every running member serves as leader or follower
// and one of them is leader, or ctx ends. It is what to call after
// stopping or starting members (curator-test: waiting for the ensemble to
// settle after killServer/restartServer).
func (c *Cluster) WaitQuorum(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		last := c.checkQuorum()
		if last == nil {
			return nil
		}
		if errors.Is(last, ErrClosed) {
			return last
		}
		t.Reset(25 * time.Millisecond)
		select {
		case <-ctx.Done():
			return fmt.Errorf("zktest: no quorum: %w (last: %v)", ctx.Err(), last)
		case <-t.C:
		}
	}
}

func (c *Cluster) checkQuorum() error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	running, leaders := 0, 0
	for i, m := range c.members {
		if !m.Running() {
			continue
		}
		running++
		mode, err := m.Mode()
		if err != nil {
			return fmt.Errorf("member %d: %w", i+1, err)
		}
		if !quorumMode(mode) {
			return fmt.Errorf("member %d: mode %s", i+1, mode)
		}
		if mode == "leader" {
			leaders++
		}
	}
	if running == 0 {
		return errors.New("no member is running")
	}
	if leaders != 1 {
		return fmt.Errorf("%d leaders", leaders)
	}
	return nil
}

// Sessions returns the union of the session ids with a live connection to
// any running member (see Server.Sessions), so a Cluster is a
// SessionLister for ExpireSession.
func (c *Cluster) Sessions() ([]int64, error) {
	var ids []int64
	seen := map[int64]bool{}
	for _, m := range c.members {
		if !m.Running() {
			continue
		}
		s, err := m.Sessions()
		if err != nil {
			return nil, err
		}
		for _, id := range s {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// Close stops every member and removes the cluster's temporary directory.
// It is idempotent.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range c.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Close()
		}()
	}
	wg.Wait()
	if err := os.RemoveAll(c.root); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	return nil
}
