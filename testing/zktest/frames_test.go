package zktest

import (
	"encoding/binary"
	"testing"
)

// packet frames a payload made of big-endian int32s and raw byte slices.
func packet(parts ...any) []byte {
	var body []byte
	for _, p := range parts {
		switch v := p.(type) {
		case int32:
			body = binary.BigEndian.AppendUint32(body, uint32(v))
		case Op:
			body = binary.BigEndian.AppendUint32(body, uint32(v))
		case string:
			body = binary.BigEndian.AppendUint32(body, uint32(len(v)))
			body = append(body, v...)
		case bool:
			b := byte(0)
			if v {
				b = 1
			}
			body = append(body, b)
		}
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func TestFramesSplit(t *testing.T) {
	getW := packet(int32(7), OpGetChildren2, "/a/b", true)
	get := packet(int32(8), OpGetData, "/a", false)
	stream := append(append([]byte{}, getW...), get...)

	// fed one byte at a time, the packets come out whole and in order
	var f frames
	var got [][]byte
	for i := range stream {
		pkts, raw := f.split(stream[i : i+1])
		if raw {
			t.Fatal("ZooKeeper framing taken for raw bytes")
		}
		got = append(got, pkts...)
	}
	if len(got) != 2 || string(got[0]) != string(getW) || string(got[1]) != string(get) {
		t.Fatalf("split = %q", got)
	}
	if xid, op, watch, ok := parseRequest(got[0]); !ok || xid != 7 || op != OpGetChildren2 || !watch {
		t.Errorf("parseRequest(getChildren2 with watch) = %d %v %v %v", xid, op, watch, ok)
	}
	if xid, op, watch, ok := parseRequest(got[1]); !ok || xid != 8 || op != OpGetData || watch {
		t.Errorf("parseRequest(getData without watch) = %d %v %v %v", xid, op, watch, ok)
	}
	if _, op, watch, ok := parseRequest(packet(int32(9), OpCreate, "/w", true)); !ok || op != OpCreate || watch {
		t.Errorf("parseRequest(create) = %v %v %v: only reads carry a watch flag", op, watch, ok)
	}
	if _, _, _, ok := parseRequest(packet(int32(1))); ok {
		t.Error("parseRequest accepted a packet without an op code")
	}
	if xid, ok := replyXid(packet(int32(-1), int32(0), int32(0))); !ok || xid != -1 {
		t.Errorf("replyXid = %d, %v", xid, ok)
	}

	// a four-letter word is not framing: everything passes as raw bytes
	var w frames
	if pkts, raw := w.split([]byte("ru")); raw || len(pkts) != 0 {
		t.Fatalf("two bytes: %q, %v", pkts, raw)
	}
	if pkts, raw := w.split([]byte("ok")); !raw || len(pkts) != 1 || string(pkts[0]) != "ruok" {
		t.Fatalf("ruok: %q, %v", pkts, raw)
	}
	if pkts, raw := w.split([]byte("more")); !raw || string(pkts[0]) != "more" {
		t.Fatalf("after raw: %q, %v", pkts, raw)
	}
	// a partial packet at the end is flushed
	var p frames
	p.split([]byte{0, 0})
	if b := p.flush(); string(b) != "\x00\x00" {
		t.Fatalf("flush = %q", b)
	}
}
