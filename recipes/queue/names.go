package queue

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocurator/curator/internal/layout"
)

// Node names, Curator's (R/queue/DistributedQueue.java and subclasses):
//
//	queue-NNNNNNNNNN                  Queue
//	queue-<9-char priority>NNNNNNNNNN Priority (priorityToString)
//	queue-|<%08X epoch ms>|NNNNNNNNNN Delay
//	queue-|<id>|NNNNNNNNNN            IDQueue
//
// NNNNNNNNNN is the server's sequence (%010d of the parent's cversion).
const (
	itemPrefix = layout.QueueItemName
	separator  = '|'
	seqLen     = 10
)

type kind uint8

const (
	kindPlain kind = iota
	kindPriority
	kindDelay
	kindID
)

var kindNames = [...]string{"Queue", "Priority", "Delay", "IDQueue"}

// entry is one item node of a listing, parsed.
type entry struct {
	name string
	key  string // what orders it (plain, priority: the name; id: the name without |id|)
	due  int64  // delay: the epoch in ms it is due at (0: due now)
	id   string // id queue: the id
}

// prefix is the name without its sequence: a requeued item is made under
// it, so that it keeps its priority, delay or id (Curator's
// makeRequeueItemPath keeps only the id).
func (e entry) prefix() string {
	if len(e.name) < len(itemPrefix)+seqLen {
		return itemPrefix
	}
	return e.name[:len(e.name)-seqLen]
}

// parse reads a child's name; false for a name that is not an item
// (Curator's "Foreign node in queue path", skipped).
func (k kind) parse(name string) (entry, bool) {
	if !strings.HasPrefix(name, itemPrefix) {
		return entry{}, false
	}
	e := entry{name: name, key: name}
	switch k {
	case kindDelay:
		// Curator's getEpoch: between the last two separators, hex; 0 if
		// none (due now).
		if i1, i2, ok := separators(name); ok {
			if v, err := strconv.ParseInt(name[i1+1:i2], 16, 64); err == nil {
				e.due = v
			}
		}
	case kindID:
		// Curator's parseId: between the first two separators; ordered by
		// the name without "|id|". A name without both is a "Bad node",
		// its id and order its raw name.
		e.id = name
		if i1 := strings.IndexByte(name, separator); i1 >= 0 {
			if i2 := strings.IndexByte(name[i1+1:], separator); i2 >= 0 {
				i2 += i1 + 1
				e.id = name[i1+1 : i2]
				e.key = name[:i1] + name[i2+1:]
			}
		}
	}
	return e, true
}

// separators finds the last two '|' of name (Curator's DistributedDelayQueue).
func separators(name string) (int, int, bool) {
	i2 := strings.LastIndexByte(name, separator)
	if i2 <= 0 {
		return 0, 0, false
	}
	i1 := strings.LastIndexByte(name[:i2], separator)
	return i1, i2, i1 > 0 && i2 > i1+1
}

// sort orders a listing: plain and priority by name (lexical order is
// priority then sequence), id by the name without its id, delay by due
// time, then by sequence.
func (k kind) sort(es []entry) {
	if k == kindDelay {
		slices.SortFunc(es, func(a, b entry) int {
			if c := cmp.Compare(a.due, b.due); c != 0 {
				return c
			}
			return cmp.Compare(seqOf(a.name), seqOf(b.name))
		})
		return
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
}

func seqOf(name string) string {
	if len(name) < seqLen {
		return name
	}
	return name[len(name)-seqLen:]
}

// PriorityString is Curator's priorityToString: "1" for p >= 0 or "0" for
// p < 0, then %08X of p's 32 bits, so that lexical order is numeric order:
// 0 is "100000000", 5 "100000005", -1 "0FFFFFFFF", math.MinInt32
// "080000000".
func PriorityString(p int32) string {
	sign := "1"
	if p < 0 {
		sign = "0"
	}
	return fmt.Sprintf("%s%08X", sign, uint32(p))
}

// DelayString is Curator's epochToString: "|", %08X of the epoch in
// milliseconds (at least 8 hex digits; today's take 11), "|".
func DelayString(until time.Time) string {
	return fmt.Sprintf("%c%08X%c", separator, until.UnixMilli(), separator)
}

// fixID is Curator's DistributedIdQueue.fixId: "/" and "|" become "_".
func fixID(id string) string {
	return strings.NewReplacer("/", "_", string(separator), "_").Replace(id)
}
