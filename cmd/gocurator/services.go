package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
)

// defaultBase is the registry's base path unless --base says otherwise.
// Curator has no default (ServiceDiscoveryBuilder.basePath is required);
// "/services" is Spring Cloud Zookeeper's (spring.cloud.zookeeper.
// discovery.root), the most common user of curator-x-discovery, and the
// one gocurator's examples use.
const defaultBase = "/services"

func init() {
	commands = append(commands, &command{
		name:     "services",
		args:     "[NAME]",
		optional: 1,
		names:    true,
		about: `Lists the services registered under the base path of a curator-x-discovery
registry (Curator's ServiceDiscovery, gocurator's discovery: Java's and
Go's instances alike, as they share the layout <base>/<name>/<id> and the
bytes), with the count of their instances. With NAME, the instances of
that service: id, address, port, SSL port, service type, enabled,
registration time, payload (JSON; its Java class apart), URI and, for a
DYNAMIC instance, the session its ephemeral node lives with.

A node that may not be read, or whose bytes are no instance, is listed as
unreadable (exit status 3); the others are listed all the same. --json
prints one JSON document: the services, each with its instances whole.`,
		setup: func(fs *flag.FlagSet) func(*cli, *connFlags, []string) int {
			base := fs.String("base", defaultBase, "the registry's base `path` (Curator's ServiceDiscoveryBuilder.basePath)")
			asJSON := fs.Bool("json", false, "print JSON instead of a table")
			maxNodes := fs.Int("max-nodes", inspect.DefaultMaxNodes, "read at most this many nodes")
			return func(c *cli, conn *connFlags, args []string) int {
				name := ""
				if len(args) > 0 {
					name = args[0]
				}
				return c.services(conn, *base, name, *asJSON, *maxNodes)
			}
		},
	})
}

func (c *cli) services(conn *connFlags, base, name string, asJSON bool, maxNodes int) int {
	switch {
	case maxNodes < 1:
		return c.errorf(exitUsage, "--max-nodes %d: must be at least 1", maxNodes)
	case !strings.HasPrefix(base, "/"):
		return c.errorf(exitUsage, "--base %q is not a ZooKeeper path (it must start with /)", base)
	case name != "" && (strings.Contains(name, "/") || name == "." || name == ".."):
		return c.errorf(exitUsage, "%q is not a service name (one path component, no /)", name)
	}
	client, err := conn.dial(c.ctx)
	if err != nil {
		return c.dialFailed(err)
	}
	defer client.Close()
	ctx, cancel := conn.op(c.ctx)
	defer cancel()
	opts := inspect.Options{MaxNodes: maxNodes}
	if base == "/" && conn.namespace == "" && !strings.Contains(conn.connect, "/") {
		opts.Skip = []string{"/zookeeper"} // the server's own nodes
	}
	reg, err := inspect.ReadRegistry(ctx, inspect.FromClient(client), base, name, opts)
	if err != nil {
		where := base
		if name != "" && inspect.IsNotFound(err) {
			where = framework.JoinPath(base, name) // no such service
		}
		return c.fail(conn, where, err)
	}
	bw := bufio.NewWriter(c.stdout)
	if asJSON {
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		err = enc.Encode(reg)
	} else if name == "" {
		writeServices(bw, reg, maxNodes)
	} else {
		writeInstances(bw, reg, maxNodes)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return c.errorf(exitFailure, "writing: %v", err)
	}
	if len(reg.Unreadable) > 0 || reg.Truncated {
		return exitIncomplete
	}
	return exitOK
}

// writeServices prints the services, with their counts of instances.
func writeServices(w io.Writer, reg *inspect.Registry, maxNodes int) {
	fmt.Fprintf(w, "services under %s at %s\n\n", reg.Base, reg.Time.Format("2006-01-02 15:04:05 MST"))
	if len(reg.Services) == 0 {
		fmt.Fprintf(w, "no service under %s\n", reg.Base)
	} else {
		rows := [][]string{{"SERVICE", "INSTANCES", "ENABLED"}}
		for _, s := range reg.Services {
			n, enabled := strconv.Itoa(len(s.Instances)), 0
			for _, in := range s.Instances {
				if in.Enabled {
					enabled++
				}
			}
			if s.Unread {
				n += "?"
			}
			rows = append(rows, []string{s.Name, n, strconv.Itoa(enabled)})
		}
		writeRows(w, rows)
	}
	writeProblems(w, "permission denied: pass --auth; or no instance", reg.Unreadable, reg.Truncated, maxNodes)
}

// writeInstances prints the one service's instances.
func writeInstances(w io.Writer, reg *inspect.Registry, maxNodes int) {
	s := reg.Services[0]
	fmt.Fprintf(w, "%s  service %s (%d instances) at %s\n\n", s.Path, s.Name, len(s.Instances), reg.Time.Format("2006-01-02 15:04:05 MST"))
	if len(s.Instances) == 0 {
		fmt.Fprintf(w, "no instance of %s\n", s.Name)
	} else {
		rows := [][]string{{"ID", "ADDRESS", "PORT", "SSL", "TYPE", "ENABLED", "REGISTERED", "SESSION", "PAYLOAD"}}
		for _, in := range s.Instances {
			registered := "-"
			if !in.RegistrationTime.IsZero() {
				registered = fmt.Sprintf("%s (%s ago)", in.RegistrationTime.Format("2006-01-02 15:04:05"), age(max(reg.Time.Sub(in.RegistrationTime), 0)))
			}
			rows = append(rows, []string{in.ID, dash(in.Address), port(in.Port), port(in.SSLPort), in.ServiceType,
				strconv.FormatBool(in.Enabled), registered, session(in.Node), payload(in)})
		}
		writeRows(w, rows)
		for _, in := range s.Instances {
			if in.URI != "" {
				fmt.Fprintf(w, "  uri: %s: %s\n", in.ID, in.URI)
			}
			for _, n := range in.Node.Notes {
				fmt.Fprintf(w, "  note: %s: %s\n", in.ID, n)
			}
		}
	}
	writeProblems(w, "permission denied: pass --auth; or no instance", reg.Unreadable, reg.Truncated, maxNodes)
}

// writeRows prints an aligned table, indented, without trailing blanks.
func writeRows(w io.Writer, rows [][]string) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\n", strings.Join(r, "\t"))
	}
	tw.Flush()
	writeTrimmed(w, &buf)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func port(p int) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

// payload shows an instance's payload JSON, its Java class before it.
func payload(in inspect.Instance) string {
	s := string(in.Payload)
	if in.PayloadClass != "" {
		s = in.PayloadClass + " " + s
	}
	return cut(s)
}

// instanceSummary is an instance in a few words, for inspect's table:
// "10.0.0.1:8080 ssl:8443 DYNAMIC disabled".
func instanceSummary(in inspect.Instance) string {
	var parts []string
	switch {
	case in.Address != "" && in.Port != 0:
		parts = append(parts, net.JoinHostPort(in.Address, strconv.Itoa(in.Port)))
	case in.Address != "":
		parts = append(parts, in.Address)
	case in.Port != 0:
		parts = append(parts, ":"+strconv.Itoa(in.Port))
	}
	if in.SSLPort != 0 {
		parts = append(parts, "ssl:"+strconv.Itoa(in.SSLPort))
	}
	parts = append(parts, in.ServiceType)
	if !in.Enabled {
		parts = append(parts, "disabled")
	}
	return strings.Join(parts, " ")
}
