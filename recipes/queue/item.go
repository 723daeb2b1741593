package queue

import (
	"encoding/binary"
	"fmt"

	"github.com/gocurator/curator"
)

// Curator's ItemSerializer format (R/queue/ItemSerializer.java): the bytes of
// one queue node, holding one item (Put) or several (PutMulti).
//
//	int32 BE  0x00010001                     version: 00 01 00 01
//	repeated: byte 0x01, int32 BE n, n bytes one item
//	byte 0x02                                end
//
// There is no item count and no checksum.
const (
	itemVersion = 0x00010001
	opItem      = 0x01
	opEOF       = 0x02
)

// Encode returns the bytes of a queue node holding items, in Curator's
// ItemSerializer format: what a Queue's Put and PutMulti write, and what
// Curator's DistributedQueue reads. A nil or empty item is an empty item.
func Encode(items ...[]byte) []byte {
	n := 4 + 1
	for _, it := range items {
		n += 5 + len(it)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, itemVersion)
	for _, it := range items {
		b = append(b, opItem)
		b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
		b = append(b, it...)
	}
	return append(b, opEOF)
}

// Decode parses a queue node's bytes in Curator's ItemSerializer format
// into its items (sub-slices of b). Bytes not in that format (another
// version, an unknown opcode, a negative or too long size, no end marker)
// give an error wrapping curator.ErrCorrupt, saying where.
func Decode(b []byte) ([][]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: queue item of %d bytes, no version", curator.ErrCorrupt, len(b))
	}
	if v := binary.BigEndian.Uint32(b); v != itemVersion {
		return nil, fmt.Errorf("%w: queue item version %#08x, want %#08x", curator.ErrCorrupt, v, itemVersion)
	}
	var items [][]byte
	for i := 4; ; {
		if i >= len(b) {
			return nil, fmt.Errorf("%w: queue item truncated at byte %d (no end marker)", curator.ErrCorrupt, i)
		}
		switch op := b[i]; op {
		case opEOF:
			return items, nil // Curator ignores what follows the end marker too
		case opItem:
			if i+5 > len(b) {
				return nil, fmt.Errorf("%w: queue item truncated at byte %d (size)", curator.ErrCorrupt, i+1)
			}
			n := int32(binary.BigEndian.Uint32(b[i+1:]))
			i += 5
			if n < 0 || int(n) > len(b)-i {
				return nil, fmt.Errorf("%w: queue item size %d at byte %d, %d bytes left", curator.ErrCorrupt, n, i-4, len(b)-i)
			}
			items = append(items, b[i:i+int(n):i+int(n)])
			i += int(n)
		default:
			return nil, fmt.Errorf("%w: queue item opcode %#02x at byte %d", curator.ErrCorrupt, op, i)
		}
	}
}
