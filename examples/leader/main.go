// Command leader shows leader election failing over when the leader's
// network is cut. Four participants, each with its own ZooKeeper session,
// take part in one election (leader.Latch, Curator's LeaderLatch). The
// leader writes to a shared node with guarded writes (only while its node
// exists) stamped with its fencing token. Midway its network is cut: it is
// told at once (SUSPENDED: its leader context ends) and stops; ZooKeeper
// expires its session after the session timeout, and the next participant
// leads, with a higher token. A guarded write of the old leader, made late
// as from a paused process, is refused.
//
//	go run ./examples/leader              # starts a local ZooKeeper
//	ZK_CONNECT=host:2181 go run ./examples/leader
package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/testing/zktest"
)

const (
	participants   = 4
	sessionTimeout = 2 * time.Second
	path           = "/demo/leader"
	shared         = "/demo/leader-work"
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("[%5.2fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func main() { zkenv.Main(run) }

type participant struct {
	id    string
	proxy *zktest.Proxy
	c     *framework.Client
	l     *leader.Latch
}

func run(ctx context.Context, srv *zktest.Server) error {
	if err := zkenv.CheckExpiry(srv); err != nil {
		return err
	}
	fmt.Printf("gocurator leader election: %d participants\n\n", participants)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	admin, err := framework.New(srv.ConnectString())
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.Create(ctx, shared, nil, framework.WithParents()); err != nil {
		return err
	}

	var ps []*participant
	for i := 1; i <= participants; i++ {
		// Each participant reaches ZooKeeper through a proxy of its own, so
		// that the demo can cut one participant's network.
		px, err := zktest.NewProxy(srv.Addr())
		if err != nil {
			return err
		}
		defer px.Close()
		c, err := framework.New(px.Addr()+srv.Chroot(), framework.WithSessionTimeout(sessionTimeout))
		if err != nil {
			return err
		}
		defer c.Close()
		id := "node-" + strconv.Itoa(i)
		l, err := leader.NewLatch(c, path, id)
		if err != nil {
			return err
		}
		defer l.Close()
		if err := l.Start(); err != nil {
			return err
		}
		ps = append(ps, &participant{id, px, c, l})
	}

	// Someone watching: every change of leader, including "nobody".
	obs, err := leader.NewElection(admin, path, "observer")
	if err != nil {
		return err
	}
	defer obs.Close()
	go func() {
		for l := range obs.Observe(ctx) {
			if l.IsNone() {
				say("   observer: nobody leads")
			} else {
				say("   observer: %s leads (token %d)", l.ID, l.Token)
			}
		}
	}()

	terms := make(chan *participant)
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lead(ctx, p, terms)
		}()
	}

	// nextTerm waits for the next leader, or for a failure: failed's, or
	// the end of ctx (a participant that cannot lead never sends on terms).
	nextTerm := func(failed <-chan error) (*participant, error) {
		select {
		case p := <-terms:
			return p, nil
		case err := <-failed:
			return nil, err
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a leader: %w", ctx.Err())
		}
	}
	first, err := nextTerm(nil)
	if err != nil {
		return err
	}
	time.Sleep(time.Second) // let it work a little
	say("*** cutting %s's network ***", first.id)
	cut := time.Now()
	failed := make(chan error, 1)
	go func() {
		if err := zktest.ExpireSession(ctx, first.proxy, srv, first.c.Session().ID()); err != nil {
			failed <- fmt.Errorf("expiring %s's session: %w", first.id, err)
			return
		}
		say("*** ZooKeeper expired %s's session; network back ***", first.id)
	}()
	second, err := nextTerm(failed)
	if err != nil {
		return err
	}
	say("*** failover: %s leads %v after the cut (session timeout %v) ***", second.id, time.Since(cut).Round(10*time.Millisecond), sessionTimeout)
	time.Sleep(time.Second)

	// The old leader, had it ignored its context (a process paused in a GC),
	// would write late: the guarded write is refused, nothing is written.
	_, err = first.l.GuardedMulti(ctx, framework.SetDataOp{Path: shared, Data: []byte(first.id + " (late)"), Version: -1})
	say("%s's late guarded write: %v", first.id, err)

	cancel()
	for _, p := range ps {
		p.l.Close()
	}
	wg.Wait()
	data, _, err := admin.Get(context.Background(), shared)
	if err != nil {
		return err
	}
	fmt.Printf("\ndone: the shared node was last written by %s; one leader at a time.\n", data)
	return nil
}

// lead takes each term of leadership as it comes and works in it, writing
// with guarded writes, until the term ends.
func lead(ctx context.Context, p *participant, terms chan<- *participant) {
	for {
		lctx, err := p.l.Await(ctx)
		if err != nil {
			return
		}
		token, err := p.l.FencingToken(lctx)
		if err != nil {
			say("%s: no fencing token (%v): not working in this term yet", p.id, err)
			continue // Await returns the term again while it lasts, else waits for the next
		}
		say("%s LEADS (fencing token %d)", p.id, token)
		select {
		case terms <- p:
		case <-ctx.Done():
			return
		}
		for lctx.Err() == nil {
			_, err := p.l.GuardedMulti(lctx, framework.SetDataOp{Path: shared, Data: []byte(p.id), Version: -1})
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, curator.ErrLockLost) {
				say("%s: %v", p.id, err)
			}
			select {
			case <-lctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
		say("%s was told: leadership LOST (%v); it stops working", p.id, context.Cause(lctx))
	}
}
