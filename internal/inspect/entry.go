package inspect

import (
	"encoding/hex"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gocurator/curator/internal/layout"
)

// newEntry describes node z in role at position, as of now.
func newEntry(z *Znode, role string, position int, now time.Time) Entry {
	n := parseName(z.Name)
	e := Entry{
		Name:        z.Name,
		Path:        z.Path,
		Role:        role,
		Position:    position,
		Mode:        n.mode,
		Sequence:    n.seq,
		ProtectedID: n.id,
		Session:     "0x0",
		TokenHex:    "0x0",
	}
	if z.Stat != nil {
		e.SessionID = z.Stat.EphemeralOwner
		e.Session = SessionHex(z.Stat.EphemeralOwner)
		if z.Stat.Ctime > 0 { // 0: the server's own nodes (/zookeeper/...)
			e.Ctime = time.UnixMilli(z.Stat.Ctime).UTC()
			e.Age = max(now.Sub(e.Ctime), 0) // clocks of client and server may differ
			e.AgeMillis = e.Age.Milliseconds()
		}
		e.Token = z.Stat.Czxid
		e.TokenHex = fmt.Sprintf("0x%x", z.Stat.Czxid)
	}
	e.Data, e.DataEncoding = DisplayData(z.Data)
	e.DataSize = len(z.Data)
	if string(z.Data) == layout.RevokeMessage {
		e.Notes = append(e.Notes, "revocation requested (its holder releases if it armed revocation)")
	}
	return e
}

// SessionHex formats a session id as ZooKeeper's logs and four-letter
// words do.
func SessionHex(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }

// DisplayData returns node data as text when it is printable UTF-8 (the
// client address Curator writes by default, a participant id), else in hex;
// the second result says which ("text" or "hex").
func DisplayData(b []byte) (string, string) {
	if printable(b) {
		return string(b), "text"
	}
	return hex.EncodeToString(b), "hex"
}

func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
