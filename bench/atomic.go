package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/retry"
)

// The atomic workload (issue 42): K sessions, each its own counter object
// on one counter (gocurator's atomic.Long, Curator's DistributedAtomicLong
// in curator/AtomicWorkloads.java; go-zookeeper has none: n/a), --ops
// increments in total, as fast as they go. Both peers use the same
// optimistic policy: bounded exponential backoff from 1 ms to 50 ms, 29
// retries; an increment that runs out of retries is made again (counted
// once, when it succeeds). The warm-up increments another counter. After
// the timed part the counter must hold exactly the increments made on
// it: anything else counts as a violation (a lost or doubled increment).

// atomicSession is a session with an atomic counter (gocurator).
type atomicSession interface {
	counter(path string) (func(ctx context.Context) (bool, error), func(ctx context.Context) (int64, error), error)
}

// atomicPolicy is the optimistic retry policy of both peers.
func atomicPolicy() retry.Policy {
	return must(retry.NewBoundedExponentialBackoff(time.Millisecond, 50*time.Millisecond, 29))
}

func (s gocuratorSession) counter(path string) (func(context.Context) (bool, error), func(context.Context) (int64, error), error) {
	l, err := atomic.NewLong(s.c, path, atomic.WithRetryPolicy(atomicPolicy()))
	if err != nil {
		return nil, nil, err
	}
	incr := func(ctx context.Context) (bool, error) {
		r, err := l.Increment(ctx)
		if errors.Is(err, curator.ErrContention) {
			return false, nil // made again by the worker
		}
		return r.Succeeded, err
	}
	get := func(ctx context.Context) (int64, error) {
		r, err := l.Get(ctx)
		return r.PreValue, err
	}
	return incr, get, nil
}

// atomicWL is the atomic workload's peer process.
func atomicWL(c *config, lib library, k, ops int) *Result {
	ss := openSessions(c, lib, k)
	run := func(path string, ops int, minTime time.Duration) (timing, int64) {
		incr := make([]func(context.Context) (bool, error), k)
		var get func(context.Context) (int64, error)
		for t, s := range ss {
			as, ok := s.(atomicSession)
			if !ok {
				fail("%s has no atomic counter", c.peer)
			}
			var err error
			incr[t], get, err = as.counter(path)
			if err != nil {
				fail("counter: %v", err)
			}
		}
		t := timed(k, ops, minTime, func(t, _ int) (time.Duration, error) {
			s := time.Now()
			for {
				ok, err := incr[t](bg)
				if err != nil {
					return 0, err
				}
				if ok {
					return time.Since(s), nil
				}
			}
		})
		return t, must(get(bg))
	}
	warm, _ := run(c.root+"/warm", c.warmup, c.warmupTime)
	t, got := run(c.root+"/counter", ops, 0)
	r := result(c, lib, ops, t.wall, t.cpu, t.lat).warmedUp(warm)
	if got != int64(t.made) {
		fmt.Fprintf(os.Stderr, "VIOLATION: atomic: the counter holds %d after %d increments\n", got, t.made)
		r.Violations++
	}
	r.Checked = t.made // the timed increments, checked against the counter
	for _, s := range ss {
		s.close()
	}
	return r
}
