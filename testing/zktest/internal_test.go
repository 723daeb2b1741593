package zktest

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
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

// refusingServer is a server that answers every four-letter word the way
// ZooKeeper 3.5+ answers one not in its 4lw.commands.whitelist (by default
// all but srvr). It returns its address.
func refusingServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			word := make([]byte, 4)
			if _, err := io.ReadFull(c, word); err == nil {
				io.WriteString(c, string(word)+" is not executed because it is not in the whitelist.\n")
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// TestRefusedFourLetterWord: a word the server refuses is an error naming
// the setting, not a reply; before, cons's refusal parsed as "no session
// connected", so ExpireSession reported an expiry at once.
func TestRefusedFourLetterWord(t *testing.T) {
	addr := refusingServer(t)
	_, err := fourLetter(addr, "cons", time.Second)
	if !errors.Is(err, errNotWhitelisted) || !strings.Contains(err.Error(), "4lw.commands.whitelist=srvr,cons") {
		t.Fatalf("fourLetter(cons) refused: got error %v, want one naming 4lw.commands.whitelist", err)
	}

	srv := &Server{ext: &external{hosts: []string{addr}}}
	if ids, err := srv.Sessions(); !errors.Is(err, errNotWhitelisted) {
		t.Fatalf("Sessions on a server refusing cons = %x, %v; want the refusal", ids, err)
	}

	px, err := NewProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ExpireSession(ctx, px, srv, 0x10000a1b2c30000); !errors.Is(err, errNotWhitelisted) || ctx.Err() != nil {
		t.Fatalf("ExpireSession with cons refused = %v (ctx %v); want the refusal at once", err, ctx.Err())
	}
	px.mu.Lock()
	defer px.mu.Unlock()
	if px.blackhole {
		t.Fatal("ExpireSession left the proxy black-holed")
	}
}
