package inspect

import (
	"strings"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
)

// family is the layout a child name belongs to.
type family int

const (
	famNone      family = iota
	famMutex            // lock-<seq>
	famReadWrite        // __READ__<seq>, __WRIT__<seq>
	famLatch            // latch-<seq>
	famLease            // lease-<seq>
	famMember           // _c_<uuid>-member, or a bare UUID
)

// name is a child name taken apart.
type name struct {
	fam  family
	seq  string // the sequence suffix (contenders)
	mode string // "read" or "write" (read-write lock)
	id   string // the protection UUID, if any
}

// parseName recognises a child name: "_c_<uuid>-" + one of the contender
// forms (or the form alone), "_c_<uuid>-member", or a bare UUID.
func parseName(s string) name {
	rest, id := s, ""
	if pid, ok := framework.ProtectedID(s); ok {
		rest, id = framework.NormalizeName(s), pid
	} else if isBareUUID(s) {
		return name{fam: famMember}
	}
	if id != "" && rest == layout.MemberName {
		return name{fam: famMember, id: id}
	}
	for _, f := range []struct {
		prefix string
		fam    family
		mode   string
	}{
		{layout.MutexName, famMutex, ""},
		{layout.ReadName, famReadWrite, "read"},
		{layout.WriteName, famReadWrite, "write"},
		{layout.LatchName, famLatch, ""},
		{layout.LeaseName, famLease, ""},
	} {
		if seq, ok := strings.CutPrefix(rest, f.prefix); ok && isSequence(seq) {
			return name{fam: f.fam, seq: seq, mode: f.mode, id: id}
		}
	}
	return name{id: id}
}

// isSequence reports whether s is a ZooKeeper sequence suffix: "%010d" of
// an int32, so ten digits, or once the counter wrapped a "-" and nine or
// ten digits.
func isSequence(s string) bool {
	digits := s
	if strings.HasPrefix(s, "-") {
		digits = s[1:]
		if len(s) != layout.SeqLen && len(s) != layout.SeqLen+1 {
			return false
		}
	} else if len(s) != layout.SeqLen {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true // nine or ten digits, by the length checks
}

// isBareUUID reports whether s is a UUID alone (Curator's double barrier
// member names), by the framework's own check of protected names.
func isBareUUID(s string) bool {
	return len(s) == 36 && framework.IsProtected(framework.ProtectedPrefix+s+"-x")
}
