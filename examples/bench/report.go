package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
)

// The JSON line and the server figures, exactly as the peers report them.

type kv struct {
	k string
	v any
}

func sortDur(s []time.Duration) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }

func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	idx := min(max(int(math.Ceil(p/100*float64(len(sorted))))-1, 0), len(sorted)-1)
	return float64(sorted[idx].Nanoseconds()) / 1e6
}

func r3(f float64) float64 { return math.Round(f*1000) / 1000 }

func emit(workload string, clients, nops int, wall time.Duration, lat []time.Duration, extra ...kv) {
	s := append([]time.Duration(nil), lat...)
	sortDur(s)
	maxMs := 0.0
	if len(s) > 0 {
		maxMs = float64(s[len(s)-1].Nanoseconds()) / 1e6
	}
	fields := append([]kv{
		{"impl", impl}, {"workload", workload}, {"clients", clients}, {"ops", nops},
		{"ops_per_s", r3(float64(nops) / wall.Seconds())},
		{"p50_ms", r3(pct(s, 50))}, {"p99_ms", r3(pct(s, 99))}, {"max_ms", r3(maxMs)},
		{"wall_s", r3(wall.Seconds())},
	}, extra...)
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(f.k)
		vj, _ := json.Marshal(f.v)
		b.Write(kj)
		b.WriteByte(':')
		b.Write(vj)
	}
	b.WriteByte('}')
	fmt.Println(b.String())
}

func fourLetter(cmd string) (string, error) {
	first := strings.Split(*connect, ",")[0]
	if i := strings.Index(first, "/"); i >= 0 {
		first = first[:i]
	}
	c, err := net.DialTimeout("tcp", first, 3*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	out, err := io.ReadAll(c)
	return string(out), err
}

func wchs() int64 {
	out, err := fourLetter("wchs")
	if err != nil {
		fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Total watches:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	fatal(fmt.Errorf("unexpected wchs reply %q", out))
	return 0
}

// lockWatches parses wchp: (path, session) watch pairs under prefix, watched
// paths under prefix, and how many of those paths no longer exist (-1 if c is nil).
func lockWatches(c *framework.Client, prefix string) (watches, paths, dangling int64) {
	out, err := fourLetter("wchp")
	if err != nil {
		fatal(err)
	}
	if c == nil {
		dangling = -1
	}
	in := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "/") {
			p := strings.TrimSpace(line)
			in = p == prefix || strings.HasPrefix(p, prefix+"/")
			if in {
				paths++
				if c != nil {
					if ok, _, err := c.Exists(bg, p); err == nil && !ok {
						dangling++
					}
				}
			}
		} else if in && strings.HasPrefix(strings.TrimSpace(line), "0x") {
			watches++
		}
	}
	return
}

func children(c *framework.Client, path string) int {
	ch, _, err := c.Children(bg, path)
	if err != nil {
		if isNoNode(err) {
			return 0
		}
		fatal(err)
	}
	return len(ch)
}

func isNoNode(err error) bool { return errors.Is(err, zk.ErrNoNode) }

// procStatus returns VmHWM, VmRSS (kB) and Threads from /proc/self/status (-1 where absent).
func procStatus() map[string]int64 {
	m := map[string]int64{"VmHWM": -1, "VmRSS": -1, "Threads": -1}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if _, want := m[k]; ok && want {
			if f := strings.Fields(v); len(f) > 0 {
				m[k], _ = strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return m
}
