package leader

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
)

// Leader is who leads an election at one moment, as ZooKeeper shows it
// (what Curator's getLeader returns, there a Participant): the participant
// whose node is first in line. The zero Leader (Node "") means nobody
// leads.
type Leader struct {
	ID    string // the leader's participant id (its node's data, UTF-8)
	Node  string // the leader's node; "" when nobody leads
	Token int64  // the node's creation zxid: the leader's fencing token
}

// IsNone reports whether l says that nobody leads.
func (l Leader) IsNone() bool { return l.Node == "" }

// Participant is one participant of an election, in line order (Curator's
// Participant).
type Participant struct {
	ID       string // its participant id (its node's data, UTF-8)
	Node     string // its node
	IsLeader bool   // first in line
}

// pollPause is how often an observer looks for an election path that does
// not exist (yet): an exists watch would stay on the server after the
// observer stops.
const pollPause = 200 * time.Millisecond

// participants lists the participants in line order; nodes gone between
// the listing and their read are left out (CURATOR-358). watch: also
// return a children watch (nil if the path does not exist).
func (e *engine) participants(ctx context.Context, watch bool) ([]Participant, []int64, *framework.Watch, error) {
	var (
		names []string // contenders, sorted
		w     *framework.Watch
	)
	if watch {
		kids, _, cw, err := e.client.ChildrenW(ctx, e.path)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil, nil, nil
		}
		if err != nil {
			return nil, nil, nil, err
		}
		names, w = e.d.Sort(kids), cw
	} else {
		var err error
		if names, err = e.d.Contenders(ctx); err != nil {
			return nil, nil, nil, err
		}
	}
	var (
		out    []Participant
		tokens []int64
	)
	for _, name := range names {
		node := framework.JoinPath(e.path, name)
		data, st, err := e.client.Get(ctx, node)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			if w != nil {
				w.Stop()
			}
			return nil, nil, nil, err
		}
		out = append(out, Participant{ID: string(data), Node: node, IsLeader: len(out) == 0})
		tokens = append(tokens, st.Czxid)
	}
	return out, tokens, w, nil
}

// leader reads who leads (Leader{} if nobody).
func (e *engine) leader(ctx context.Context, watch bool) (Leader, *framework.Watch, error) {
	ps, tokens, w, err := e.participants(ctx, watch)
	if err != nil || len(ps) == 0 {
		return Leader{}, w, err
	}
	return Leader{ID: ps[0].ID, Node: ps[0].Node, Token: tokens[0]}, w, nil
}

// observe reports the leader now and at every change it sees, including
// "nobody" (Leader{}); see Election.Observe.
func (e *engine) observe(ctx context.Context) <-chan Leader {
	ch := make(chan Leader)
	e.mu.Lock()
	if e.closed || ctx == nil {
		e.mu.Unlock()
		close(ch)
		return ch
	}
	e.bg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.bg.Done()
		defer close(ch)
		octx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(e.closeCtx, cancel)
		defer stop()
		var (
			last  Leader
			sent  bool
			pause backoff
		)
		for {
			l, w, err := e.leader(octx, true)
			if err != nil {
				if octx.Err() != nil || errors.Is(err, curator.ErrClosed) {
					return
				}
				e.client.Logger().Debug("leader: observing", "path", e.path, "err", err)
				if pause.wait(octx) != nil {
					return
				}
				continue
			}
			pause.reset()
			var change <-chan framework.Event
			var poll *time.Timer
			if w != nil {
				change = w.C()
			} else {
				poll = time.NewTimer(pollPause)
			}
			out := ch
			if sent && l == last {
				out = nil // nothing new to tell
			}
			var tick <-chan time.Time
			if poll != nil {
				tick = poll.C
			}
			select {
			case out <- l:
				last, sent = l, true
				select { // told: now wait for the next change
				case <-change:
				case <-tick:
				case <-octx.Done():
				}
			case <-change:
			case <-tick:
			case <-octx.Done():
			}
			if w != nil {
				w.Stop()
			}
			if poll != nil {
				poll.Stop()
			}
			if octx.Err() != nil {
				return
			}
		}
	}()
	return ch
}
