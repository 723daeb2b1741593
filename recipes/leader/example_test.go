package leader_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/testing/zktest"
)

func ExampleElection() {
	srv, err := zktest.NewServer() // a real ZooKeeper for the example; use your ensemble
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var es []*leader.Election
	for _, id := range []string{"alpha", "beta"} {
		client, err := framework.New(srv.ConnectString(), framework.WithSessionTimeout(10*time.Second))
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		e, err := leader.NewElection(client, "/services/scheduler", id)
		if err != nil {
			log.Fatal(err)
		}
		defer e.Close()
		es = append(es, e)
	}
	alpha, beta := es[0], es[1]

	leaderCtx, err := alpha.Campaign(ctx) // blocks until alpha leads
	if err != nil {
		log.Fatal(err)
	}
	betaLeads := make(chan context.Context)
	go func() {
		lctx, err := beta.Campaign(ctx) // waits behind alpha
		if err != nil {
			log.Fatal(err)
		}
		betaLeads <- lctx
	}()
	l, _ := alpha.Leader(ctx)
	fmt.Println("leader:", l.ID)

	// Work while leaderCtx lives: it ends the moment leadership can no
	// longer be relied on (connection suspended, session lost, node
	// deleted), or on Resign.
	if err := alpha.Resign(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("alpha's term over:", leaderCtx.Err() != nil)
	<-betaLeads
	l, _ = beta.Leader(ctx)
	fmt.Println("leader:", l.ID)
	// Output:
	// leader: alpha
	// alpha's term over: true
	// leader: beta
}

func ExampleLatch() {
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

	latch, err := leader.NewLatch(client, "/services/indexer", "worker-1",
		leader.WithCloseMode(leader.CloseNotifyLeader))
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
	leaderCtx, err := latch.Await(ctx)
	if err != nil {
		log.Fatal(err)
	}
	token, _ := latch.FencingToken(leaderCtx) // rises from leader to leader
	fmt.Println("leads:", latch.HasLeadership(), "token > 0:", token > 0)
	fmt.Println(<-told)
	latch.Close()
	fmt.Println(<-told)
	// Output:
	// leads: true token > 0: true
	// isLeader
	// notLeader
}

func ExampleSelector() {
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

	done := make(chan struct{})
	s, err := leader.NewSelector(client, "/services/compactor", "worker-1",
		func(ctx context.Context) error {
			// Leadership lasts while this runs; ctx ends if it is lost.
			fmt.Println("leading: compacting")
			close(done)
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}
	<-done
	s.Close()
	fmt.Println("closed")
	// Output:
	// leading: compacting
	// closed
}
