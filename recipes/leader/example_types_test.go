package leader_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/testing/zktest"
)

// A Leader is who leads at one moment: Leader reads it once, Observe
// reports each change. The zero Leader says that nobody leads.
func ExampleLeader() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example; use your ensemble
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	e, err := leader.NewElection(client, "/services/scheduler", "alpha")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	l, err := e.Leader(ctx)
	fmt.Println("before the campaign, nobody leads:", l.IsNone(), err)

	observed := e.Observe(ctx) // the first value comes at once: nobody
	fmt.Println("observed, nobody leads:", (<-observed).IsNone())

	if _, err := e.Campaign(ctx); err != nil {
		log.Fatal(err)
	}
	for l = range observed { // a slow receiver sees the latest leader
		if !l.IsNone() {
			break
		}
	}
	token, err := e.FencingToken(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("observed leader:", l.ID)
	fmt.Println("its node is ours:", l.Node == e.Node(), "its token is ours:", l.Token == token)
	// Output:
	// before the campaign, nobody leads: true <nil>
	// observed, nobody leads: true
	// observed leader: alpha
	// its node is ours: true its token is ours: true
}

// Participants lists everyone taking part, in line order, the leader
// first (Curator's getParticipants).
func ExampleParticipant() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	alpha, err := leader.NewElection(client, "/services/scheduler", "alpha")
	if err != nil {
		log.Fatal(err)
	}
	defer alpha.Close()
	queued := make(chan string, 1)
	beta, err := leader.NewElection(client, "/services/scheduler", "beta",
		leader.WithOnEnqueue(func(node string) { queued <- node }))
	if err != nil {
		log.Fatal(err)
	}
	defer beta.Close()

	if _, err := alpha.Campaign(ctx); err != nil {
		log.Fatal(err)
	}
	betaDone := make(chan error, 1)
	go func() {
		_, err := beta.Campaign(ctx) // waits behind alpha
		betaDone <- err
	}()
	select {
	case <-queued: // beta is in line
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}

	parts, err := beta.Participants(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range parts {
		fmt.Printf("%s leads: %v\n", p.ID, p.IsLeader)
	}
	beta.Close() // a waiting Campaign fails with ErrClosed
	fmt.Println("beta's Campaign, ErrClosed:", errors.Is(<-betaDone, curator.ErrClosed))
	// Output:
	// alpha leads: true
	// beta leads: false
	// beta's Campaign, ErrClosed: true
}

// leadership is a Listener of one's own: it keeps the state a Latch's
// listener calls report. Calls come in order, on one goroutine.
type leadership struct{ changes chan string }

func (l leadership) IsLeader()  { l.changes <- "leading" }
func (l leadership) NotLeader() { l.changes <- "not leading" }

// Any type with IsLeader and NotLeader methods (Curator's
// LeaderLatchListener) can listen to a Latch. Here the leader's term ends
// when another client deletes its node, and the latch takes part again.
func ExampleListener() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	operator, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer operator.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	latch, err := leader.NewLatch(client, "/services/indexer", "worker-1")
	if err != nil {
		log.Fatal(err)
	}
	defer latch.Close()
	l := leadership{changes: make(chan string, 4)}
	latch.AddListener(l) // before Start: it hears every change
	if err := latch.Start(); err != nil {
		log.Fatal(err)
	}
	term, err := latch.Await(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-l.changes)

	if err := operator.Delete(ctx, latch.Node()); err != nil { // an operator deletes the leader's node
		log.Fatal(err)
	}
	<-term.Done()
	fmt.Println("term over, ErrLockLost:", errors.Is(context.Cause(term), curator.ErrLockLost))
	fmt.Println(<-l.changes)
	fmt.Println(<-l.changes) // alone in line again, on a new node
	// Output:
	// leading
	// term over, ErrLockLost: true
	// not leading
	// leading
}

// ListenerFuncs makes a Listener of two functions; a nil one is skipped.
// AddListener returns the function that removes it.
func ExampleListenerFuncs() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	first, err := leader.NewLatch(client, "/services/indexer", "worker-1")
	if err != nil {
		log.Fatal(err)
	}
	if err := first.Start(); err != nil {
		log.Fatal(err)
	}
	if _, err := first.Await(ctx); err != nil {
		log.Fatal(err)
	}

	second, err := leader.NewLatch(client, "/services/indexer", "worker-2")
	if err != nil {
		log.Fatal(err)
	}
	defer second.Close()
	leading := make(chan struct{}, 1)
	remove := second.AddListener(leader.ListenerFuncs{
		OnLeader: func() { leading <- struct{}{} }, // no OnNotLeader: skipped
	})
	defer remove()
	if err := second.Start(); err != nil {
		log.Fatal(err)
	}
	l, err := second.Leader(ctx)
	fmt.Println("leader:", l.ID, err)

	first.Close() // worker-1 leaves: worker-2 is next in line
	select {
	case <-leading:
		fmt.Println("worker-2 told: leading", second.HasLeadership())
	case <-ctx.Done():
		log.Fatal(ctx.Err())
	}
	// Output:
	// leader: worker-1 <nil>
	// worker-2 told: leading true
}

// A Latch closed while it leads tells its listeners (NotLeader) only with
// CloseNotifyLeader; the default, CloseSilent, calls none. Close returns
// once the listener calls it queued are done. A CloseMode prints as
// Curator's LeaderLatch.CloseMode constant.
func ExampleCloseMode() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, mode := range []leader.CloseMode{leader.CloseSilent, leader.CloseNotifyLeader} {
		latch, err := leader.NewLatch(client, "/services/indexer", "worker-1", leader.WithCloseMode(mode))
		if err != nil {
			log.Fatal(err)
		}
		told := make(chan string, 2)
		latch.AddListener(leader.ListenerFuncs{
			OnLeader:    func() { told <- "isLeader" },
			OnNotLeader: func() { told <- "notLeader" },
		})
		if err := latch.Start(); err != nil {
			log.Fatal(err)
		}
		if _, err := latch.Await(ctx); err != nil {
			log.Fatal(err)
		}
		fmt.Println(mode, <-told)
		if err := latch.Close(); err != nil {
			log.Fatal(err)
		}
		select {
		case change := <-told:
			fmt.Println(mode, "closed:", change)
		default:
			fmt.Println(mode, "closed: no call")
		}
	}
	// Output:
	// SILENT isLeader
	// SILENT closed: no call
	// NOTIFY_LEADER isLeader
	// NOTIFY_LEADER closed: notLeader
}

// A panic in a Selector's function is recovered: the term ends as if the
// function had returned a *PanicError, which WithOnError receives
// (wrapped; find it with errors.As). It wraps curator.ErrPanic.
func ExamplePanicError() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	reported := make(chan error, 1)
	s, err := leader.NewSelector(client, "/services/compactor", "worker-1",
		func(ctx context.Context) error {
			panic("index out of range")
		},
		leader.WithOnError(func(err error) {
			select {
			case reported <- err: // the first report
			default:
			}
		}))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}

	err = <-reported
	var pe *leader.PanicError
	if errors.As(err, &pe) {
		fmt.Println("panicked with:", pe.Value)
		fmt.Println("stack recorded:", len(pe.Stack) > 0)
	}
	fmt.Println("ErrPanic:", errors.Is(err, curator.ErrPanic))
	// Output:
	// panicked with: index out of range
	// stack recorded: true
	// ErrPanic: true
}

// With WithAutoRequeue a Selector takes part again after every term: its
// function runs again whenever it leads, until the selector is closed.
func ExampleWithAutoRequeue() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	turns := 0
	third := make(chan struct{})
	s, err := leader.NewSelector(client, "/services/compactor", "worker-1",
		func(ctx context.Context) error {
			turns++ // the function's calls never overlap
			fmt.Println("turn", turns)
			if turns == 3 {
				close(third)
				<-ctx.Done() // lead until Close
			}
			return nil
		},
		leader.WithAutoRequeue())
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}
	<-third
	fmt.Println("Close:", s.Close()) // cancels the function's context and waits for it
	// Output:
	// turn 1
	// turn 2
	// turn 3
	// Close: <nil>
}
