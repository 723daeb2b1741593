package inspect

import (
	"fmt"
	"testing"
)

// uuid returns a valid UUID numbered i.
func uuid(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0xabc00000+i, i) }

func TestParseName(t *testing.T) {
	u := uuid(1)
	for _, tc := range []struct {
		in   string
		want name
	}{
		{"_c_" + u + "-lock-0000000042", name{fam: famMutex, seq: "0000000042", id: u}},
		{"lock-0000000042", name{fam: famMutex, seq: "0000000042"}},
		{"_c_" + u + "-__READ__0000000001", name{fam: famReadWrite, seq: "0000000001", mode: "read", id: u}},
		{"_c_" + u + "-__WRIT__0000000002", name{fam: famReadWrite, seq: "0000000002", mode: "write", id: u}},
		{"_c_" + u + "-latch-0000000003", name{fam: famLatch, seq: "0000000003", id: u}},
		{"_c_" + u + "-lease-0000000004", name{fam: famLease, seq: "0000000004", id: u}},
		{"_c_" + u + "-member", name{fam: famMember, id: u}},
		{u, name{fam: famMember}},
		{"_c_" + u + "-lock--000000001", name{fam: famMutex, seq: "-000000001", id: u}},
		{"_c_" + u + "-lock--2147483648", name{fam: famMutex, seq: "-2147483648", id: u}},
		// Not Curator's layout.
		{"_c_" + u + "-lock-42", name{id: u}},
		{"_c_" + u + "-lock-00000000x2", name{id: u}},
		{"_c_0123456789abcdef0123456789abcdef-lock-0000000001", name{}}, // go-zookeeper's zk.Lock
		{"member", name{}},
		{"lock-", name{}},
		{"ready", name{}},
		{"locks", name{}},
		{"_c_" + u + "-foo", name{id: u}},
		{"_c_" + u + "-lock-0000000001x", name{id: u}},
	} {
		if got := parseName(tc.in); got != tc.want {
			t.Errorf("parseName(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestDisplayData(t *testing.T) {
	for _, tc := range []struct {
		in       []byte
		want, as string
	}{
		{[]byte("127.0.1.1"), "127.0.1.1", "text"},
		{nil, "", "text"},
		{[]byte("participant é"), "participant é", "text"},
		{[]byte{0, 0, 0, 5}, "00000005", "hex"},
		{[]byte("a\nb"), "610a62", "hex"},
		{[]byte{0xff}, "ff", "hex"},
	} {
		got, as := DisplayData(tc.in)
		if got != tc.want || as != tc.as {
			t.Errorf("DisplayData(%q) = %q, %q; want %q, %q", tc.in, got, as, tc.want, tc.as)
		}
	}
}

func TestSessionHex(t *testing.T) {
	if got := SessionHex(0x100000a3b0c0001); got != "0x100000a3b0c0001" {
		t.Errorf("SessionHex = %s", got)
	}
	if got := SessionHex(-1); got != "0xffffffffffffffff" {
		t.Errorf("SessionHex(-1) = %s", got)
	}
}
