// Command gocurator shows who holds and who waits on the recipes of Apache
// Curator and gocurator in ZooKeeper (locks, read-write locks, semaphores,
// leader latches, barriers, shared counts), recognised by their node
// layout, and lets an operator ask a stuck holder to let go (revoke) or
// take its lock away (release --force); watch prints a subtree's changes
// as they happen; services lists a curator-x-discovery registry's
// services and their instances.
//
//	go install github.com/gocurator/curator/cmd/gocurator@latest
//
//	gocurator inspect [--watch] [--json] PATH
//	gocurator watch [--json] [--max-depth N] [--no-data] [--summary] PATH
//	gocurator services [--base PATH] [--json] [NAME]
//	gocurator revoke [--any] NODE
//	gocurator release --force [--yes] [--any] NODE
//	gocurator help [COMMAND]
//
// Run "gocurator help" for the flags every command takes and the exit
// statuses.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	exitOK         = 0
	exitFailure    = 1 // could not do it: unreachable, missing, denied, refused
	exitUsage      = 2 // bad command line
	exitIncomplete = 3 // inspect or services listed what it could, but not everything
)

// cli is one run of the command: its streams, so that every command
// writes where it is told.
type cli struct {
	ctx    context.Context // ended by Ctrl-C (SIGINT) or SIGTERM
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&cli{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}).run(os.Args[1:])
	stop()
	os.Exit(code)
}

func (c *cli) run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, mainUsage)
		return exitUsage
	}
	switch name := args[0]; name {
	case "help", "-h", "-help", "--help":
		return c.help(args[1:])
	default:
		cmd := lookup(name)
		if cmd == nil {
			fmt.Fprintf(c.stderr, "gocurator: unknown command %q\n\n%s", name, mainUsage)
			return exitUsage
		}
		return cmd.run(c, args[1:])
	}
}

// help prints the main usage, or a command's.
func (c *cli) help(args []string) int {
	switch len(args) {
	case 0:
		fmt.Fprint(c.stdout, mainUsage)
		return exitOK
	case 1:
		if cmd := lookup(args[0]); cmd != nil {
			cmd.flagSet(c.stdout).Usage()
			return exitOK
		}
		fmt.Fprintf(c.stderr, "gocurator help: unknown command %q\n\n%s", args[0], mainUsage)
		return exitUsage
	}
	fmt.Fprintf(c.stderr, "usage: gocurator help [COMMAND]\n")
	return exitUsage
}

// errorf reports a failure on stderr and returns its exit status.
func (c *cli) errorf(code int, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "gocurator: "+format+"\n", args...)
	return code
}
