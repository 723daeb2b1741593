package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
)

func init() {
	commands = append(commands, &command{
		name:  "release",
		args:  "NODE",
		nargs: 1,
		about: `Deletes NODE, a stuck holder's (or waiter's) node as "gocurator inspect" lists
it, so that the next in line gets the lock. The node's owner is NOT told: it
may go on acting as the holder until its session ends or it looks at its
node; its fencing token is what a resource can refuse its late writes by.
Shows the node (session, age, data) and asks for "yes" on stdin first, or
deletes at once with --yes. Refuses without --force, and refuses a node that
is not a recognised contender, lease or member node unless --any is given.`,
		setup: func(fs *flag.FlagSet) func(*cli, *connFlags, []string) int {
			force := fs.Bool("force", false, "really delete (required)")
			yes := fs.Bool("yes", false, "do not ask for confirmation")
			anyNode := fs.Bool("any", false, "delete even a node that is not a recognised contender, lease or member node")
			return func(c *cli, conn *connFlags, args []string) int {
				if !*force {
					return c.errorf(exitUsage, "release deletes %s and takes the lock from its holder without telling it: pass --force to do it", args[0])
				}
				return c.release(conn, args[0], *yes, *anyNode)
			}
		},
	})
}

func (c *cli) release(conn *connFlags, node string, yes, anyNode bool) int {
	return c.onNode(conn, "delete", node, func(loc *inspect.Located) string {
		if loc.Contender || anyNode {
			return ""
		}
		return "it is not a recognised contender, lease or member node (pass --any to delete it anyway)"
	},
		func(_ context.Context, client *framework.Client, loc *inspect.Located) int {
			return c.deleteNode(conn, client, node, loc, yes)
		})
}

func (c *cli) deleteNode(conn *connFlags, client *framework.Client, node string, loc *inspect.Located, yes bool) int {
	fmt.Fprintf(c.stdout, "about to delete:\n")
	describe(c.stdout, loc)
	fmt.Fprintf(c.stdout, "its owner is not told: a holder may go on as if it held until its session ends or it looks at its node\n")
	if !yes {
		fmt.Fprintf(c.stdout, "delete it? type yes to confirm: ")
		answer := make(chan string, 1)
		go func() { // a read of stdin heeds no ctx: Ctrl-C must still end the question
			line, _ := bufio.NewReader(c.stdin).ReadString('\n')
			answer <- line
		}()
		var line string
		select {
		case line = <-answer:
		case <-c.ctx.Done():
			fmt.Fprintln(c.stdout)
			return c.errorf(exitFailure, "interrupted: %s left as it is", node)
		}
		if !isTerminal(c.stdin) {
			fmt.Fprintln(c.stdout) // the answer was not echoed
		}
		if strings.TrimSpace(line) != "yes" {
			return c.errorf(exitFailure, "not confirmed: %s left as it is", node)
		}
	}
	// A new deadline: the question may have waited.
	ctx, cancel := conn.op(c.ctx)
	defer cancel()
	ok, st, err := client.Exists(ctx, node)
	switch {
	case err != nil:
		return c.fail(conn, node, err)
	case !ok:
		fmt.Fprintf(c.stdout, "%s is gone already (released meanwhile); nothing deleted\n", node)
		return exitOK
	case st.Czxid != loc.Entry.Token:
		return c.errorf(exitFailure, "%s was deleted and made again since it was shown (token %s now): not deleted; look again", node, inspect.SessionHex(st.Czxid))
	}
	// Sent once: a retry after a lost reply would find the node gone and
	// tell the operator that its holder released it.
	err = conn.retries.once(func() error { return client.Delete(ctx, node) })
	switch {
	case err == nil:
		fmt.Fprintf(c.stdout, "deleted %s\n", node)
		return exitOK
	case inspect.IsNotFound(err):
		fmt.Fprintf(c.stdout, "%s is gone already (released meanwhile); nothing deleted\n", node)
		return exitOK
	case inspect.IsUnreachable(err), errors.Is(err, context.Canceled):
		return c.deleteUnanswered(conn, client, node, loc, err)
	}
	return c.fail(conn, node, err)
}

// deleteUnanswered finds out what became of a delete that got no answer
// (the connection went, the timeout passed, Ctrl-C): it may have been
// carried out.
func (c *cli) deleteUnanswered(conn *connFlags, client *framework.Client, node string, loc *inspect.Located, err error) int {
	if c.ctx.Err() != nil {
		return c.errorf(exitFailure, "interrupted while deleting %s: it may have been deleted; look again (gocurator inspect)", node)
	}
	ctx, cancel := conn.op(c.ctx)
	defer cancel()
	ok, st, xerr := client.Exists(ctx, node)
	switch {
	case xerr != nil:
		return c.errorf(exitFailure, "the delete of %s got no answer (%v), nor did a look after it (%v): it may have been deleted; look again (gocurator inspect)", node, err, xerr)
	case !ok:
		fmt.Fprintf(c.stdout, "deleted %s (its reply was lost: the node is gone now, deleted by this release unless its owner released it at that very moment)\n", node)
		return exitOK
	case st.Czxid != loc.Entry.Token:
		return c.errorf(exitFailure, "the delete of %s got no answer (%v), and a new node of that name exists now (token %s): look again", node, err, inspect.SessionHex(st.Czxid))
	}
	return c.errorf(exitFailure, "the delete of %s got no answer (%v) and did not take effect: nothing deleted; run the command again", node, err)
}
