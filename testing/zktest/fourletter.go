package zktest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// errNotWhitelisted is wrapped by the error of a four-letter word the
// server refuses. ZooKeeper 3.5 and later answer only the words listed in
// their 4lw.commands.whitelist, by default srvr alone, and refuse the
// others with a reply, not an error: "cons is not executed because it is
// not in the whitelist.".
var errNotWhitelisted = errors.New("not in the server's 4lw.commands.whitelist")

// refusal is what ZooKeeper answers, after the word, to a four-letter word
// not in its 4lw.commands.whitelist.
const refusal = " is not executed because it is not in the whitelist."

// fourLetter sends a four-letter word to addr and returns the whole reply.
// A word the server refuses (see errNotWhitelisted) is an error.
func fourLetter(addr, cmd string, timeout time.Duration) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zktest: four-letter word %q is not four letters", cmd)
	}
	deadline := time.Now().Add(timeout)
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	b, err := io.ReadAll(io.LimitReader(c, 64<<20))
	if err != nil {
		return string(b), fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	if err := refused(cmd, string(b)); err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	return string(b), nil
}

// refused returns an error wrapping errNotWhitelisted if reply is the
// server's refusal of cmd.
func refused(cmd, reply string) error {
	if !strings.Contains(reply, cmd+refusal) {
		return nil
	}
	return fmt.Errorf("%w (add %s to it in the server's zoo.cfg, e.g. 4lw.commands.whitelist=srvr,%s, or * for every word)", errNotWhitelisted, cmd, cmd)
}

// FourLetter sends a four-letter word (srvr, mntr, cons, wchs, ...) to the
// server and returns its reply, with a 3 s timeout. A word the server
// refuses because its 4lw.commands.whitelist does not list it (ZooKeeper
// 3.5 and later list only srvr by default; the servers started here list
// every word) is an error naming that setting. curator-test has no
// equivalent; Curator's own tests use FourLetterWordMain.
func (s *Server) FourLetter(cmd string) (string, error) {
	return fourLetter(s.Addr(), cmd, 3*time.Second)
}

func parseMode(srvr string) (string, bool) {
	for _, line := range strings.Split(srvr, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), true
		}
	}
	return "", false
}

// Mode returns the server's mode from srvr: "standalone", "leader",
// "follower" (or "observer"), or an error if it is down or not serving
// (for example while an ensemble has no quorum).
func (s *Server) Mode() (string, error) {
	r, err := s.FourLetter("srvr")
	if err != nil {
		return "", err
	}
	m, ok := parseMode(r)
	if !ok {
		return "", fmt.Errorf("zktest: %s is not serving: %s", s.Addr(), firstLine(r))
	}
	return m, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(empty reply)"
	}
	return strconv.Quote(s)
}

// WatchCount returns the number of watches the server holds, of every
// kind: mntr's zk_watch_count, which on ZooKeeper 3.8 is the data watches
// (set by getData and exists, including exists on a missing node) plus
// the child watches (set by getChildren). A watch is one (session, path,
// kind): a getData and a getChildren watch by one session on one path
// count 2; the same watch set twice counts 1. Persistent (addWatch)
// watches are not verified here.
//
// Before, WatchCount read wchs and so missed child watches; DataWatchCount
// keeps that count.
func (s *Server) WatchCount() (int, error) {
	m, err := s.Mntr()
	if err != nil {
		return 0, err
	}
	v, ok := m["zk_watch_count"]
	if !ok {
		return 0, fmt.Errorf("zktest: mntr of %s has no zk_watch_count", s.Addr())
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("zktest: mntr zk_watch_count: %w", err)
	}
	return n, nil
}

// DataWatchCount returns the number of data watches the server holds
// ("Total watches:N" of wchs): those set by getData and exists (also on a
// missing node), one per (session, path). Child watches are not counted:
// ZooKeeper 3.8's wchs, wchc and wchp list data watches only. The child
// watches are WatchCount minus DataWatchCount, when nothing changes
// between the two calls.
func (s *Server) DataWatchCount() (int, error) {
	r, err := s.FourLetter("wchs")
	if err != nil {
		return 0, err
	}
	return parseWatchCount(r)
}

func parseWatchCount(r string) (int, error) {
	for _, line := range strings.Split(r, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Total watches:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0, fmt.Errorf("zktest: wchs: %w", err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("zktest: wchs: no \"Total watches:\" in %s", firstLine(r))
}

// WatchesByPath returns the server's data watches (getData and exists,
// not child watches: see DataWatchCount) as path -> ids of the sessions
// watching it (wchp).
func (s *Server) WatchesByPath() (map[string][]int64, error) {
	r, err := s.FourLetter("wchp")
	if err != nil {
		return nil, err
	}
	return parseWchp(r)
}

// WatchesBySession returns the server's data watches (getData and exists,
// not child watches: see DataWatchCount) as session id -> watched paths
// (wchc).
func (s *Server) WatchesBySession() (map[int64][]string, error) {
	r, err := s.FourLetter("wchc")
	if err != nil {
		return nil, err
	}
	return parseWchc(r)
}

func parseSessionID(s string) (int64, error) {
	h, ok := strings.CutPrefix(strings.TrimSpace(s), "0x")
	if !ok {
		return 0, fmt.Errorf("zktest: session id %q is not 0x-hex", s)
	}
	u, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("zktest: session id %q: %w", s, err)
	}
	return int64(u), nil
}

// parseWchp parses
//
//	/path
//		0x1000a2b3c4d0000
func parseWchp(r string) (map[string][]int64, error) {
	out := map[string][]int64{}
	cur := ""
	for _, line := range strings.Split(r, "\n") {
		switch t := strings.TrimSpace(line); {
		case t == "":
		case strings.HasPrefix(t, "/"):
			cur = t
			if _, ok := out[cur]; !ok {
				out[cur] = nil
			}
		case strings.HasPrefix(t, "0x") && cur != "":
			id, err := parseSessionID(t)
			if err != nil {
				return nil, fmt.Errorf("zktest: wchp: %w", err)
			}
			out[cur] = append(out[cur], id)
		default:
			return nil, fmt.Errorf("zktest: wchp: unexpected line %q", line)
		}
	}
	return out, nil
}

// parseWchc parses
//
//	0x1000a2b3c4d0000
//		/path
func parseWchc(r string) (map[int64][]string, error) {
	out := map[int64][]string{}
	var cur int64
	have := false
	for _, line := range strings.Split(r, "\n") {
		switch t := strings.TrimSpace(line); {
		case t == "":
		case strings.HasPrefix(t, "0x"):
			id, err := parseSessionID(t)
			if err != nil {
				return nil, fmt.Errorf("zktest: wchc: %w", err)
			}
			cur, have = id, true
			if _, ok := out[cur]; !ok {
				out[cur] = nil
			}
		case strings.HasPrefix(t, "/") && have:
			out[cur] = append(out[cur], t)
		default:
			return nil, fmt.Errorf("zktest: wchc: unexpected line %q", line)
		}
	}
	return out, nil
}

// Mntr returns the key/value pairs of mntr (zk_server_state,
// zk_znode_count, zk_watch_count, zk_ephemerals_count, ...).
func (s *Server) Mntr() (map[string]string, error) {
	r, err := s.FourLetter("mntr")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(r))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if ok && k != "" {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("zktest: mntr: no key/value pairs in %s", firstLine(r))
	}
	return out, nil
}

var sidRE = regexp.MustCompile(`sid=(0x[0-9a-fA-F]+)`)

// Sessions returns the ids of the sessions that have a live connection to
// this server, parsed from cons (connections without a session, such as
// the four-letter connection itself, are left out).
func (s *Server) Sessions() ([]int64, error) {
	r, err := s.FourLetter("cons")
	if err != nil {
		return nil, err
	}
	return parseCons(r)
}

func parseCons(r string) ([]int64, error) {
	var ids []int64
	for _, m := range sidRE.FindAllStringSubmatch(r, -1) {
		id, err := parseSessionID(m[1])
		if err != nil {
			return nil, fmt.Errorf("zktest: cons: %w", err)
		}
		if id != 0 {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
