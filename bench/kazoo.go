package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The kazoo peer: kazoo's queue recipes (Python, Debian's python3-kazoo),
// driven by our own script (kazoo/kazoo_queue.py, embedded in this binary), for
// the queue workload alone (issue 42: beside Curator's and kazoo's).

//go:embed kazoo/kazoo_queue.py
var kazooScript []byte

const installKazoo = "apt-get install -y python3-kazoo"

// pythonCandidates are the interpreters tried, in order (a test replaces
// them).
var pythonCandidates = []string{"/usr/bin/python3", "python3"}

// kazooPeer is the script written out, with the interpreter that has kazoo.
type kazooPeer struct {
	python string
	script string
	impl   string // "kazoo 2.8.0 (Python 3.11)"
	dir    string
}

// usesKazoo tells whether any job runs the kazoo peer.
func usesKazoo(jobs []job) bool {
	return slices.ContainsFunc(jobs, func(j job) bool { return slices.Contains(j.peers, "kazoo") })
}

// buildKazoo finds a python3 with kazoo (Debian's /usr/bin/python3 first:
// python3-kazoo is installed for it, not for another python3 on PATH) and
// writes the script into a new temporary directory, or says why it cannot
// (with the command that installs what is missing).
func buildKazoo(ctx context.Context) (*kazooPeer, error) {
	var pythons []string
	for _, name := range pythonCandidates {
		if p, err := exec.LookPath(name); err == nil && !slices.Contains(pythons, p) {
			pythons = append(pythons, p)
		}
	}
	if len(pythons) == 0 {
		return nil, fmt.Errorf("python3 not found; install with: %s", installKazoo)
	}
	python, impl := "", ""
	for _, p := range pythons {
		out, err := exec.CommandContext(ctx, p, "-c",
			`import sys, kazoo; from importlib.metadata import version; print("kazoo %s (Python %d.%d)" % ((version("kazoo").replace(".dev0", ""),) + sys.version_info[:2]))`).Output()
		if err == nil {
			python, impl = p, strings.TrimSpace(string(out))
			break
		}
	}
	if python == "" {
		return nil, fmt.Errorf("no python3 with kazoo (tried %s); install with: %s", strings.Join(pythons, ", "), installKazoo)
	}
	dir, err := os.MkdirTemp("", "gocurator-bench-kazoo-")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "kazoo_queue.py")
	if err := os.WriteFile(script, kazooScript, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &kazooPeer{python: python, script: script, impl: impl, dir: dir}, nil
}

// command is the command line of one peer process.
func (p *kazooPeer) command(args []string) *exec.Cmd {
	return exec.Command(p.python, append([]string{"-u", p.script}, args...)...)
}

func (p *kazooPeer) remove() { os.RemoveAll(p.dir) }
