package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/recipes/locks"
)

func init() {
	commands = append(commands, &command{
		name:  "revoke",
		args:  "NODE",
		nargs: 1,
		about: `Sends the revocation request of Curator's Revoker.attemptRevoke: writes
__REVOKE__ into NODE (a lock's contender node, as "gocurator inspect" lists
it). Holders that armed revocation (Curator's makeRevocable, gocurator's
locks.WithRevocation) release; others keep holding, with the request in their
node's data. A missing NODE is an error. NODE must be a mutex or read-write
lock contender whose data is a lock's default (an address, or nothing),
since the request overwrites the node's data, unless --any: a LeaderSelector
uses the mutex layout with its participant id as data.`,
		setup: func(fs *flag.FlagSet) func(*cli, *connFlags, []string) int {
			anyNode := fs.Bool("any", false, "write the request even into a node that is not a lock's contender")
			return func(c *cli, conn *connFlags, args []string) int {
				return c.revoke(conn, args[0], *anyNode)
			}
		},
	})
}

func (c *cli) revoke(conn *connFlags, node string, anyNode bool) int {
	return c.onNode(conn, "revoke", node, func(loc *inspect.Located) string {
		switch {
		case loc.Revocable || anyNode:
			return ""
		case loc.Contender && (loc.Recipe.Kind == inspect.KindMutex || loc.Recipe.Kind == inspect.KindReadWrite):
			return "its data is not a lock's default (an address): it may be a LeaderSelector's participant id, or the application's, and the request would overwrite it (pass --any to write it anyway)"
		}
		return "it is not a mutex or read-write lock contender, and the request would overwrite its data (pass --any to write it anyway)"
	},
		func(ctx context.Context, client *framework.Client, loc *inspect.Located) int {
			return c.revokeNode(ctx, conn, client, node, loc)
		})
}

func (c *cli) revokeNode(ctx context.Context, conn *connFlags, client *framework.Client, node string, loc *inspect.Located) int {
	if err := locks.Revoke(ctx, client, node); err != nil {
		return c.fail(conn, node, err)
	}
	// locks.Revoke is quiet about a node gone meanwhile: say what happened.
	ok, _, err := client.Exists(ctx, node)
	if err != nil {
		return c.fail(conn, node, err)
	}
	fmt.Fprintf(c.stdout, "revocation requested:\n")
	describe(c.stdout, loc)
	if !ok {
		fmt.Fprintf(c.stdout, "%s is gone now: its holder released it (or its session ended)\n", node)
	} else {
		fmt.Fprintf(c.stdout, "holders that armed revocation release; \"gocurator inspect --watch\" shows when\n")
	}
	return exitOK
}
