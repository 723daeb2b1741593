// Command group shows group membership (nodes.GroupMember, Curator's
// GroupMember): workers, each with its own ZooKeeper session, join a
// group under one path, each with a payload (its address). The first
// worker prints the member list every time it changes: workers join,
// one changes its payload, one leaves cleanly, one crashes (its network
// is cut: ZooKeeper removes it once its session expires), and a new one
// joins. A worker starting with an id another live worker holds is
// refused, not let in to flap.
//
//	go run ./examples/group              # starts a local ZooKeeper
//	ZK_CONNECT=host:2181 go run ./examples/group
package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/nodes"
	"github.com/gocurator/curator/testing/zktest"
)

const (
	group          = "/demo/workers"
	sessionTimeout = 2 * time.Second
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("[%5.2fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func main() { zkenv.Main(run) }

// worker is one process of the demo: a session of its own, through a
// proxy of its own so that the demo can cut its network, and its
// membership.
type worker struct {
	id     string
	proxy  *zktest.Proxy
	client *framework.Client
	member *nodes.GroupMember
}

func run(ctx context.Context, srv *zktest.Server) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	fmt.Printf("gocurator group membership under %s\n\n", group)

	var workers []*worker
	defer func() { // in reverse: the first worker, which watches, last
		for _, w := range slices.Backward(workers) {
			w.member.Close()
			w.client.Close()
			w.proxy.Close()
		}
	}()
	join := func(id, addr string) (*worker, error) {
		px, err := zktest.NewProxy(srv.Addr())
		if err != nil {
			return nil, err
		}
		c, err := framework.New(px.Addr()+srv.Chroot(), framework.WithSessionTimeout(sessionTimeout))
		if err != nil {
			px.Close()
			return nil, err
		}
		m, err := nodes.NewGroupMember(c, group, id, []byte(addr))
		if err == nil {
			err = m.Start(ctx)
		}
		if err != nil {
			c.Close()
			px.Close()
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		w := &worker{id, px, c, m}
		workers = append(workers, w)
		return w, nil
	}

	first, err := join("worker-1", "10.0.0.1:8080")
	if err != nil {
		return err
	}
	events := first.member.Events()
	say("worker-1 joined; members: %s", list(first.member))

	// expect waits for worker-1 to see want happen to id, then prints the
	// member list, which must be members.
	expect := func(id string, want nodes.MemberEventType, members ...string) error {
		for {
			select {
			case ev := <-events:
				if ev.ID != id || ev.Type != want {
					continue // an earlier change, told already or coalesced
				}
				detail := ""
				if ev.Type != nodes.MemberLeft {
					detail = fmt.Sprintf(" (%s)", ev.Data)
				}
				say("  worker-1 sees: %s %s%s", id, ev.Type, detail)
				got := slices.Sorted(maps.Keys(first.member.Members()))
				if !slices.Equal(got, members) {
					return fmt.Errorf("members %q, want %q", got, members)
				}
				say("  members: %s", list(first.member))
				return nil
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s %s: %w", id, want, ctx.Err())
			}
		}
	}

	if _, err := join("worker-2", "10.0.0.2:8080"); err != nil {
		return err
	}
	if err := expect("worker-2", nodes.MemberJoined, "worker-1", "worker-2"); err != nil {
		return err
	}
	third, err := join("worker-3", "10.0.0.3:8080")
	if err != nil {
		return err
	}
	if err := expect("worker-3", nodes.MemberJoined, "worker-1", "worker-2", "worker-3"); err != nil {
		return err
	}

	say("*** worker-3 moves to port 9090 ***")
	if err := third.member.SetData(ctx, []byte("10.0.0.3:9090")); err != nil {
		return err
	}
	if err := expect("worker-3", nodes.MemberChanged, "worker-1", "worker-2", "worker-3"); err != nil {
		return err
	}

	say("*** another process starts as worker-3 ***")
	if _, err := join("worker-3", "10.0.0.9:8080"); errors.Is(err, curator.ErrLocked) {
		say("  refused: %v", err)
	} else {
		return fmt.Errorf("a second worker-3: %v, want refused", err)
	}

	say("*** worker-2 leaves ***")
	if err := workers[1].member.Close(); err != nil {
		return err
	}
	if err := expect("worker-2", nodes.MemberLeft, "worker-1", "worker-3"); err != nil {
		return err
	}

	say("*** worker-3 crashes: its network is cut (session timeout %v) ***", sessionTimeout)
	third.proxy.Blackhole()
	if err := expect("worker-3", nodes.MemberLeft, "worker-1"); err != nil {
		return err
	}

	if _, err := join("worker-4", "10.0.0.4:8080"); err != nil {
		return err
	}
	if err := expect("worker-4", nodes.MemberJoined, "worker-1", "worker-4"); err != nil {
		return err
	}
	fmt.Println("\ndone: the member list followed every join, change, leave and crash.")
	return nil
}

// list is g's members, sorted: id=payload.
func list(g *nodes.GroupMember) string {
	m := g.Members()
	var s []string
	for _, id := range slices.Sorted(maps.Keys(m)) {
		s = append(s, id+"="+string(m[id]))
	}
	return strings.Join(s, " ")
}
