package zktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// SessionLister lists the ids of the sessions with a live connection to a
// server or an ensemble. *Server and *Cluster implement it.
type SessionLister interface {
	Sessions() ([]int64, error)
}

// ExpireSession makes ZooKeeper expire the session sessionID for real, the
// way a network partition does (curator-test's KillSession, which instead
// closes the session from a second client; a partition exercises the
// client's own timeout handling too). The client must be connected through
// p. ExpireSession black-holes p, waits until s (a *Server or a *Cluster)
// no longer lists sessionID among its live connections (the server closes
// the connection when it expires the session, about one session timeout
// after the last ping got through), then lifts the black hole (unless p was
// already black-holed), so that the client reconnects and is told its
// session has expired. It polls every 25 ms until ctx ends; without a
// deadline on ctx it gives up after 60 s.
//
// If the session is not connected to s at all, ExpireSession returns at
// once without knowing whether it expired. s must answer the cons
// four-letter word: a server that does not list it in its
// 4lw.commands.whitelist (ZooKeeper 3.5 and later allow only srvr by
// default; the servers started here allow every word) makes
// ExpireSession return an error at once, naming that setting, without
// touching p.
func ExpireSession(ctx context.Context, p *Proxy, s SessionLister, sessionID int64) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
	}
	if _, err := s.Sessions(); errors.Is(err, errNotWhitelisted) {
		return fmt.Errorf("zktest: cannot expire session 0x%x: %w", uint64(sessionID), err)
	}
	p.mu.Lock()
	was := p.blackhole
	p.mu.Unlock()
	p.Blackhole()
	if !was {
		defer p.setBlackhole(false)
	}
	t := time.NewTimer(0)
	defer t.Stop()
	var last error
	for {
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("zktest: session 0x%x not expired: %w (last error: %v)", uint64(sessionID), ctx.Err(), last)
			}
			return fmt.Errorf("zktest: session 0x%x not expired: %w", uint64(sessionID), ctx.Err())
		case <-t.C:
		}
		ids, err := s.Sessions()
		if err == nil && !slices.Contains(ids, sessionID) {
			return nil
		}
		last = err
		t.Reset(25 * time.Millisecond)
	}
}
