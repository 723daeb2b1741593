// Command demo is gocurator's headline demo: several workers, each with its
// own ZooKeeper session, compete for one lock. Each prints when it waits,
// holds (with its fencing token) and releases. Midway, the holder's session
// is expired on purpose (its network is cut until the server expires it):
// the holder is told it lost the lock, the next worker takes over, and the
// fencing token rises, so a resource that checks tokens rejects the stale
// holder.
//
//	go run ./examples/demo              # starts a local ZooKeeper
//	ZK_CONNECT=host:2181 go run ./examples/demo
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

const (
	workers  = 4
	rounds   = 2
	holdTime = 400 * time.Millisecond
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("[%5.2fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

// resource accepts work only with a fencing token higher than the last.
type resource struct {
	mu   sync.Mutex
	last int64
}

func (r *resource) write(who string, token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if token <= r.last {
		say("   resource: REJECTED %s's write: token %d is older than %d", who, token, r.last)
		return
	}
	r.last = token
	say("   resource: accepted %s's write (token %d)", who, token)
}

func (r *resource) lastToken() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func main() { zkenv.Main(run) }

func run(ctx context.Context, srv *zktest.Server) error {
	if err := zkenv.CheckExpiry(srv); err != nil {
		return err
	}
	fmt.Printf("gocurator demo: %d workers, one lock\n\n", workers)

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res := &resource{}
	type worker struct {
		name  string
		proxy *zktest.Proxy
		c     *framework.Client
		m     *locks.Mutex
	}
	var ws []*worker
	for i := 1; i <= workers; i++ {
		// Each worker reaches ZooKeeper through a proxy of its own, so the
		// demo can cut one worker's network.
		px, err := zktest.NewProxy(srv.Addr())
		if err != nil {
			return err
		}
		defer px.Close()
		c, err := framework.New(px.Addr()+srv.Chroot(), framework.WithSessionTimeout(2*time.Second))
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.BlockUntilConnected(ctx); err != nil {
			return err
		}
		m, err := locks.NewMutex(c, "/demo/lock")
		if err != nil {
			return err
		}
		ws = append(ws, &worker{fmt.Sprintf("worker-%d", i), px, c, m})
	}

	var (
		mu      sync.Mutex
		holds   int
		expired bool
		wg      sync.WaitGroup
	)
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				say("%s waiting", w.name)
				hctx, err := w.m.Acquire(ctx)
				if err != nil {
					say("%s could not acquire: %v", w.name, err)
					return
				}
				token, err := w.m.FencingToken(hctx)
				if err != nil {
					say("%s: %v", w.name, err)
				}
				say("%s HOLDS the lock (fencing token %d)", w.name, token)
				res.write(w.name, token)

				mu.Lock()
				holds++
				victim := holds == 3 && !expired
				expired = expired || victim
				mu.Unlock()
				if victim {
					say("*** cutting %s's network until ZooKeeper expires its session ***", w.name)
					go func() {
						if err := zktest.ExpireSession(ctx, w.proxy, srv, w.c.Session().ID()); err != nil {
							say("expiring: %v", err)
							return
						}
						say("*** %s's session has expired on the server; network back ***", w.name)
					}()
				}
				work := holdTime
				if victim {
					work = time.Minute // it works on, unaware, until it is told
				}
				select {
				case <-time.After(work):
				case <-ctx.Done(): // the demo is over (interrupted, or out of time)
				case <-hctx.Done():
					say("%s was told: lock LOST (%v); it stops its work", w.name, context.Cause(hctx))
					// Had it not listened (a paused process waking up late), its
					// write would come with the old token, after the next holder's:
					// the resource refuses it.
					lateWrite := func() {
						for res.lastToken() <= token {
							select {
							case <-ctx.Done(): // no later holder came
								return
							case <-time.After(20 * time.Millisecond):
							}
						}
						res.write(w.name+" (a late write, as from a paused process)", token)
					}
					wg.Add(1)
					go func() { defer wg.Done(); lateWrite() }()
				}
				if err := w.m.Unlock(ctx); err != nil && !errors.Is(err, curator.ErrLockLost) {
					say("%s release: %v", w.name, err)
				}
				say("%s released", w.name)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	fmt.Println("\ndone: every worker held the lock; tokens only went up.")
	return nil
}
