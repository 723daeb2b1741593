package zktest

import (
	"reflect"
	"testing"
)

func TestReservePorts(t *testing.T) {
	held, err := reservePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(held)
	lo, hi, ranged := pickRange()
	more, err := reservePorts(300)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(more)
	seen := map[int]bool{held[0].port: true}
	for _, l := range more {
		if seen[l.port] {
			t.Fatalf("port %d handed out twice while reserved", l.port)
		}
		seen[l.port] = true
		if ranged && (l.port < lo || l.port > hi) {
			t.Fatalf("port %d outside %d-%d", l.port, lo, hi)
		}
	}
}

func TestParsers(t *testing.T) {
	wchp := "/a\n\t0x100000abc000001\n\t0x2\n/b/c\n\t0x3\n"
	gotP, err := parseWchp(wchp)
	if want := map[string][]int64{"/a": {0x100000abc000001, 2}, "/b/c": {3}}; err != nil || !reflect.DeepEqual(gotP, want) {
		t.Errorf("parseWchp = %v, %v; want %v", gotP, err, want)
	}
	wchc := "0x1\n\t/a\n\t/b\n0xff00000000000001\n\t/c\n"
	gotC, err := parseWchc(wchc)
	if want := map[int64][]string{1: {"/a", "/b"}, -0x00ffffffffffffff: {"/c"}}; err != nil || !reflect.DeepEqual(gotC, want) {
		t.Errorf("parseWchc = %v, %v; want %v", gotC, err, want)
	}
	if _, err := parseWchp("garbage\n"); err == nil {
		t.Error("parseWchp accepted garbage")
	}
	cons := " /127.0.0.1:40812[0](queued=0,recved=1,sent=0)\n" +
		" /127.0.0.1:40814[1](queued=0,recved=5,sent=5,sid=0x10000a1b2c30000,lop=PING,est=1,to=2000,lcxid=0x1,lzxid=0x5,lresp=1,llat=0,minlat=0,avglat=0,maxlat=1)\n"
	ids, err := parseCons(cons)
	if err != nil || len(ids) != 1 || ids[0] != 0x10000a1b2c30000 {
		t.Errorf("parseCons = %x, %v", ids, err)
	}
	if n, err := parseWatchCount("2 connections watching 3 paths\nTotal watches:7\n"); err != nil || n != 7 {
		t.Errorf("parseWatchCount = %d, %v", n, err)
	}
	if m, ok := parseMode("Zookeeper version: 3.8.0\nMode: follower\nNode count: 5\n"); !ok || m != "follower" {
		t.Errorf("parseMode = %q, %v", m, ok)
	}
	if _, ok := parseMode("This ZooKeeper instance is not currently serving requests\n"); ok {
		t.Error("parseMode found a mode in a not-serving reply")
	}
}
