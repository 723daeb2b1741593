package driver

import (
	"fmt"
	"strings"

	"github.com/gocurator/curator"
)

// Shortcuts are the decisions the driver makes on what it knows instead
// of on a read of the server, each proved where it is used (issue 38, 2.;
// docs/design.md has the table of what each relies on, what breaks it and
// the test that attacks it, docs/performance.md what it buys). The
// mutex's two, measured by bench's processes workload, can be turned off,
// for the bench alone (SetShortcutsOff); the driver is correct, only
// slower, without them.
const (
	// ShortcutHandoff: a mutex waiter whose predecessor goes holds without
	// reading the queue again (handoff.go); off, every wake reads the
	// queue, as Curator's does.
	ShortcutHandoff = "handoff"
	// ShortcutParentRead: the parent's stat or listing read behind a
	// create at no round trip (driver.go, createOptions).
	ShortcutParentRead = "parent"
)

// off holds the shortcuts turned off. Written only by SetShortcutsOff,
// before any driver is used.
var off struct{ handoff, parent bool }

// SetShortcutsOff turns off the shortcuts named in list (comma-separated;
// "" turns none off) for the whole process: for the bench, which measures
// what each buys, never for production. Call it before any driver is made.
// An unknown name is curator.ErrInvalidArgument.
func SetShortcutsOff(list string) error {
	var o struct{ handoff, parent bool }
	for _, n := range strings.Split(list, ",") {
		switch strings.TrimSpace(n) {
		case "":
		case ShortcutHandoff:
			o.handoff = true
		case ShortcutParentRead:
			o.parent = true
		default:
			return fmt.Errorf("driver: %w: no shortcut %q (have %s, %s)", curator.ErrInvalidArgument, n,
				ShortcutHandoff, ShortcutParentRead)
		}
	}
	off = o
	return nil
}
