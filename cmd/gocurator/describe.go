package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
)

// describe prints what a located node is: the facts an operator checks
// before acting on it.
func describe(w io.Writer, loc *inspect.Located) {
	e := loc.Entry
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  node:\t%s\n", e.Path)
	if loc.Contender {
		fmt.Fprintf(tw, "  recipe:\t%s  %s\n", loc.Recipe.Path, loc.Recipe.Label)
		fmt.Fprintf(tw, "  role:\t%s\n", role(loc))
	} else {
		why := "not a contender, lease or member node of a recipe this tool recognises"
		if loc.Why != "" {
			why = loc.Why
		}
		fmt.Fprintf(tw, "  recipe:\t(%s)\n", why)
	}
	fmt.Fprintf(tw, "  session:\t%s\n", session(e))
	if !e.Ctime.IsZero() {
		fmt.Fprintf(tw, "  age:\t%s (created %s)\n", age(e.Age), e.Ctime.Format("2006-01-02 15:04:05 MST"))
	}
	fmt.Fprintf(tw, "  data:\t%s\n", data(e))
	fmt.Fprintf(tw, "  token:\t%s (%d)\n", e.TokenHex, e.Token)
	for _, n := range e.Notes {
		fmt.Fprintf(tw, "  note:\t%s\n", n)
	}
	tw.Flush()
}

// role names a contender's place: "holder", "waiter 2 of 3", "lease 1".
func role(loc *inspect.Located) string {
	e := loc.Entry
	switch e.Role {
	case inspect.RoleWaiter:
		n := len(loc.Recipe.Waiters)
		if loc.Recipe.Lock != nil && len(loc.Recipe.Lock.Waiters) > 0 {
			n = len(loc.Recipe.Lock.Waiters)
		}
		return fmt.Sprintf("waiter %d of %d%s", e.Position, n, mode(e))
	case inspect.RoleHolder:
		return "holder" + mode(e)
	}
	return fmt.Sprintf("%s %d", e.Role, e.Position)
}

// onNode connects, finds node and, if allowed says so of it, runs act;
// otherwise it shows the node and refuses to verb it, saying why.
func (c *cli) onNode(conn *connFlags, verb, node string, refuse func(*inspect.Located) string,
	act func(ctx context.Context, client *framework.Client, loc *inspect.Located) int) int {
	client, err := conn.dial(c.ctx)
	if err != nil {
		return c.dialFailed(err)
	}
	defer client.Close()
	ctx, cancel := conn.op(c.ctx)
	defer cancel()
	loc, err := inspect.Locate(ctx, inspect.FromClient(client), node)
	if err != nil {
		return c.fail(conn, node, err)
	}
	if why := refuse(loc); why != "" {
		describe(c.stderr, loc)
		return c.errorf(exitFailure, "refusing to %s %s: %s", verb, node, why)
	}
	return act(ctx, client, loc)
}
