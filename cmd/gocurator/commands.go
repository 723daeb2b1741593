package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one subcommand: its flags (beside the connection flags every
// command takes) and what it does with its arguments.
type command struct {
	name  string
	args  string // the positional arguments, for the usage line
	nargs int
	// optional is how many more arguments may follow the nargs (services'
	// NAME); names says they are names, not ZooKeeper paths.
	optional int
	names    bool
	about    string
	// setup declares the command's own flags and returns what runs it.
	setup func(fs *flag.FlagSet) func(c *cli, conn *connFlags, args []string) int
}

var commands []*command // filled by each command's file, in help order

func lookup(name string) *command {
	for _, cmd := range commands {
		if cmd.name == name {
			return cmd
		}
	}
	return nil
}

// flagSet returns the command's flags, printing usage to out.
func (cmd *command) flagSet(out io.Writer) *flag.FlagSet {
	fs, _, _ := cmd.flags(out)
	return fs
}

func (cmd *command) flags(out io.Writer) (*flag.FlagSet, *connFlags, func(*cli, *connFlags, []string) int) {
	fs := flag.NewFlagSet("gocurator "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(out)
	conn := &connFlags{}
	run := cmd.setup(fs)
	conn.register(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: gocurator %s [flags] %s\n\n%s\n\nflags (also accepted after %s; -flag and --flag alike):\n", cmd.name, cmd.args, cmd.about, cmd.args)
		fs.PrintDefaults()
		fmt.Fprint(w, exitStatuses)
	}
	return fs, conn, run
}

// run parses the command line and runs the command.
func (cmd *command) run(c *cli, args []string) int {
	fs, conn, run := cmd.flags(c.stderr)
	usage := fs.Usage
	fs.Usage = func() {} // the flag package's call on a bad flag: a hint below instead
	pos, err := parseInterspersed(fs, args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(c.stdout)
		fs.Usage()
		return exitOK
	}
	if err != nil { // the flag package has said why
		fmt.Fprintf(c.stderr, "run \"gocurator %s -h\" for help\n", cmd.name)
		return exitUsage
	}
	if len(pos) < cmd.nargs || len(pos) > cmd.nargs+cmd.optional {
		want := fmt.Sprint(cmd.nargs)
		if cmd.optional > 0 {
			want = fmt.Sprintf("%d to %d", cmd.nargs, cmd.nargs+cmd.optional)
		}
		fmt.Fprintf(c.stderr, "gocurator %s: want %s argument (%s), got %d %q\nrun \"gocurator %s -h\" for help\n",
			cmd.name, want, cmd.args, len(pos), pos, cmd.name)
		return exitUsage
	}
	if err := conn.check(); err != nil {
		fmt.Fprintf(c.stderr, "gocurator %s: %v\n", cmd.name, err)
		return exitUsage
	}
	for _, p := range pos {
		if !cmd.names && !strings.HasPrefix(p, "/") {
			fmt.Fprintf(c.stderr, "gocurator %s: %q is not a ZooKeeper path (it must start with /)\n", cmd.name, p)
			return exitUsage
		}
	}
	return run(c, conn, pos)
}

// parseInterspersed parses flags before, between and after the positional
// arguments ("release NODE --force"), which the flag package alone stops
// at; after "--" everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

const mainUsage = `gocurator shows who holds and who waits on Apache Curator's and gocurator's
recipes in ZooKeeper (mutexes, read-write locks, semaphores, leader latches,
barriers, shared counts), recognised by their node layout.

usage:
  gocurator inspect [--watch] [--json] PATH        list every recipe under PATH: holders, waiters, sessions, ages, tokens
  gocurator watch [--json] PATH                    print PATH's subtree's changes as they happen (a tail -f)
  gocurator services [--base PATH] [--json] [NAME] list curator-x-discovery's services, or NAME's instances (Java's and Go's)
  gocurator revoke [--any] NODE                    ask the holder of a lock node to release it (Curator's Revoker)
  gocurator release --force [--yes] [--any] NODE   delete a stuck holder's node, after asking
  gocurator help [COMMAND]                         this, or a command's flags

Every command takes:
  --connect host:port[,host:port][/chroot]   default $ZK_CONNECT, else 127.0.0.1:2181
  --namespace NS                             Curator's namespace: paths are under /NS
  --auth scheme:credentials                  e.g. digest:user:password
  --tls-ca FILE --tls-cert FILE --tls-key FILE   connect with TLS (ZooKeeper's secureClientPort)
  --timeout D                                bound on connecting and on each step, a whole tree read being one (default 10s)
` + exitStatuses

const exitStatuses = `
exit status: 0 done; 1 failed (unreachable, no such path, permission denied,
refused); 2 bad command line; 3 inspect or services listed what it could
read, but some nodes were unreadable (for services: or no instance) or
--max-nodes cut the walk.
`
