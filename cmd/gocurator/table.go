package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/layout"
)

// dataWidth is the most characters of node data a table shows (--json
// shows it all).
const dataWidth = 40

// writeTable prints a snapshot as aligned tables, one per recipe.
func writeTable(w io.Writer, s *inspect.Snapshot, maxNodes int, watching bool) {
	fmt.Fprintf(w, "%s at %s", s.Path, s.Time.Format("2006-01-02 15:04:05 MST"))
	if watching {
		fmt.Fprint(w, " (watching; Ctrl-C to stop)")
	}
	fmt.Fprintln(w)
	if s.Missing {
		fmt.Fprintf(w, "\n%s does not exist (waiting for it to be created)\n", s.Path)
		return
	}
	if len(s.Recipes) == 0 {
		fmt.Fprintf(w, "\nno recipe under %s\n", s.Path)
	}
	for _, r := range s.Recipes {
		fmt.Fprintln(w)
		writeRecipe(w, r)
	}
	writeProblems(w, "permission denied; pass --auth", s.Unreadable, s.Truncated, maxNodes)
}

// writeProblems lists the nodes that could not be read (why says why they
// may be) and whether --max-nodes cut the walk.
func writeProblems(w io.Writer, why string, unreadable []inspect.Problem, truncated bool, maxNodes int) {
	if len(unreadable) > 0 {
		fmt.Fprintf(w, "\nunreadable (%s):\n", why)
		for _, p := range unreadable {
			fmt.Fprintf(w, "  %s: %s\n", p.Path, p.Error)
		}
	}
	if truncated {
		fmt.Fprintf(w, "\ntruncated: more than --max-nodes=%d nodes; what is beyond is not listed\n", maxNodes)
	}
}

// row is one line of a recipe's table.
type row struct {
	role  string
	node  string // relative to the recipe's path
	entry inspect.Entry
	data  string // shown instead of the entry's data, if set
}

func writeRecipe(w io.Writer, r inspect.Recipe) {
	head := r.Path + "  " + r.Label
	var rows []row
	add := func(role string, prefix string, e inspect.Entry) {
		rows = append(rows, row{role: role, node: prefix + e.Name, entry: e})
	}
	queue := func(holder string, holders, waiters []inspect.Entry, prefix string) {
		for _, e := range holders {
			add(holder+mode(e), prefix, e)
		}
		for _, e := range waiters {
			add(fmt.Sprintf("%swaiter %d%s", strings.TrimSuffix(holder, "holder"), e.Position, mode(e)), prefix, e)
		}
	}
	switch r.Kind {
	case inspect.KindLeaderLatch:
		for _, e := range r.Holders {
			add("leader", "", e)
		}
		for _, e := range r.Waiters {
			add(fmt.Sprintf("waiter %d", e.Position), "", e)
		}
	case inspect.KindSemaphore:
		lp := ""
		if r.Lock != nil {
			lp = layout.LeasesChild + "/"
		}
		for _, e := range r.Leases {
			add(fmt.Sprintf("lease %d", e.Position), lp, e)
		}
		if r.Lock != nil {
			queue("lock holder", r.Lock.Holders, r.Lock.Waiters, layout.LocksChild+"/")
		}
		if len(r.Leases) == 0 {
			head += "  (no lease)"
		}
	case inspect.KindDoubleBarrier:
		if r.Ready != nil && *r.Ready {
			head += "  (ready)"
		}
		for _, e := range r.Members {
			add(fmt.Sprintf("member %d", e.Position), "", e)
		}
	case inspect.KindGroup:
		head += fmt.Sprintf("  (%d members)", len(r.Members))
		for _, e := range r.Members {
			add(fmt.Sprintf("member %d", e.Position), "", e)
		}
	case inspect.KindService:
		head += fmt.Sprintf("  (%d instances)", len(r.Instances))
		for _, in := range r.Instances {
			rows = append(rows, row{fmt.Sprintf("instance %d", in.Node.Position), in.Node.Name, in.Node, instanceSummary(in)})
		}
	case inspect.KindQueue, inspect.KindQueueClaims:
		head += fmt.Sprintf("  (%d nodes, oldest %s)", *r.Depth, age(r.Oldest))
		for _, e := range r.Items {
			add(fmt.Sprintf("%s %d", e.Role, e.Position), "", e)
		}
	case inspect.KindSharedCount:
		head += fmt.Sprintf(" = %d", *r.Count)
		add("node", "", *r.Node)
	case inspect.KindAtomicLong:
		head += fmt.Sprintf(" = %d", *r.Long)
		add("node", "", *r.Node)
	case inspect.KindBarrier:
		add("node", "", *r.Node)
	case inspect.KindUnknown:
		for _, e := range r.Children {
			add("child", "", e)
		}
	default:
		queue("holder", r.Holders, r.Waiters, "")
	}
	fmt.Fprintln(w, head)
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	notes := slices.ContainsFunc(rows, func(r row) bool { return len(r.entry.Notes) > 0 })
	fmt.Fprint(tw, "  ROLE\tNODE\tSESSION\tAGE\tDATA\tTOKEN")
	if notes {
		fmt.Fprint(tw, "\tNOTE")
	}
	fmt.Fprintln(tw)
	for _, rw := range rows {
		e := rw.entry
		d := data(e)
		switch {
		case rw.data != "":
			d = rw.data
		case r.Kind == inspect.KindGroup:
			d = fmt.Sprintf("(%dB) %s", e.DataSize, d) // a member's payload: its size matters
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s (%d)", rw.role, rw.node, session(e), entryAge(e), d, e.TokenHex, e.Token)
		if notes {
			fmt.Fprintf(tw, "\t%s", strings.Join(e.Notes, "; "))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	writeTrimmed(w, &buf)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// writeTrimmed copies a tabwriter's output without its trailing blanks.
func writeTrimmed(w io.Writer, buf *bytes.Buffer) {
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		io.WriteString(w, strings.TrimRight(l, " \n")+strings.Repeat("\n", strings.Count(l, "\n")))
	}
}

func mode(e inspect.Entry) string {
	if e.Mode == "" {
		return ""
	}
	return " (" + e.Mode + ")"
}

func session(e inspect.Entry) string {
	if e.SessionID == 0 {
		return "-"
	}
	return e.Session
}

// entryAge is the node's age, "-" when its ctime is unknown.
func entryAge(e inspect.Entry) string {
	if e.Ctime.IsZero() {
		return "-"
	}
	return age(e.Age)
}

// age prints a duration as an operator reads it: 4.2s, 3m05s, 2h10m, 3d04h.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// data shows node data: text as is, else 0x and hex; cut to dataWidth.
func data(e inspect.Entry) string {
	s := e.Data
	if e.DataEncoding == "hex" {
		s = "0x" + s
	}
	if s == "" {
		return "-"
	}
	return cut(s)
}

// cut cuts s to dataWidth characters.
func cut(s string) string {
	if utf8.RuneCountInString(s) > dataWidth {
		r := []rune(s)
		s = string(r[:dataWidth-1]) + "…"
	}
	return s
}
