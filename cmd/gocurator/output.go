package main

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/gocurator/curator/internal/inspect"
)

// output draws snapshots: JSON (one document; with --watch one per line
// per redraw) or tables (redrawn in place on a terminal).
type output struct {
	w        io.Writer
	json     bool
	watch    bool
	clear    bool // a terminal: clear the screen before each redraw
	maxNodes int
	draws    int
}

func (o *output) draw(s *inspect.Snapshot) error {
	o.draws++
	bw := bufio.NewWriter(o.w)
	if o.json {
		enc := json.NewEncoder(bw)
		if !o.watch {
			enc.SetIndent("", "  ")
		}
		if err := enc.Encode(s); err != nil {
			return err
		}
		return bw.Flush()
	}
	switch {
	case o.clear:
		io.WriteString(bw, "\x1b[H\x1b[2J")
	case o.draws > 1:
		io.WriteString(bw, "\n")
	}
	writeTable(bw, s, o.maxNodes, o.watch)
	return bw.Flush()
}
