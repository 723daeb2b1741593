package framework_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/testing/zktest"
)

// A listener sees every connection state, in order: CONNECTED; SUSPENDED
// when the network is cut (whatever depends on the session is in doubt);
// LOST when the session has expired (its ephemeral nodes are gone); then
// RECONNECTED, in a new session. The example cuts the network with a fault
// proxy and has the server expire the session for real.
func ExampleWithListener() {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	px, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer px.Close()

	// New starts connecting at once: a listener given to it with
	// WithListener hears CONNECTED too (AddListener, later, might not).
	states := make(chan framework.State, 16)
	client, err := framework.New(px.Addr(),
		framework.WithSessionTimeout(2*time.Second), // short, for the example
		framework.WithListener(func(s framework.State) { states <- s }))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	next := func() framework.State {
		select {
		case s := <-states:
			return s
		case <-ctx.Done():
			log.Fatal(ctx.Err())
			return 0
		}
	}

	fmt.Println(next()) // CONNECTED
	session := client.Session()

	// A network partition: the client hears nothing from the server.
	px.Blackhole()
	fmt.Println(next()) // SUSPENDED
	select {
	case <-session.Suspended():
		fmt.Println("  session.Suspended() closed")
	default:
		log.Fatal("SUSPENDED posted but the session's Suspended is open")
	}

	// The server expires the session; then the partition ends.
	if err := zktest.ExpireSession(ctx, px, srv, session.ID()); err != nil {
		log.Fatal(err)
	}
	px.Heal()
	fmt.Println(next()) // LOST
	select {
	case <-session.Done():
		fmt.Println("  session.Done() closed, ErrSessionLost:", errors.Is(session.Err(), curator.ErrSessionLost))
	default:
		log.Fatal("LOST posted but the session's Done is open")
	}

	fmt.Println(next()) // RECONNECTED
	fmt.Println("  new session:", client.Session().ID() != session.ID())
	// Output:
	// CONNECTED
	// SUSPENDED
	//   session.Suspended() closed
	// LOST
	//   session.Done() closed, ErrSessionLost: true
	// RECONNECTED
	//   new session: true
}
