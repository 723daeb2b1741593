package main

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLatencyLine: bytes pass in order both ways, none sooner than the
// delay after it was sent; the chroot stays on the connect string, one
// relay per server; Close ends every connection through the line.
func TestLatencyLine(t *testing.T) {
	const delay = 20 * time.Millisecond
	var targets []string
	accepted := make(chan net.Conn, 2)
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		targets = append(targets, ln.Addr().String())
		go func() {
			if c, err := ln.Accept(); err == nil {
				accepted <- c
			}
		}()
	}
	line, through, err := startLatency(strings.Join(targets, ",")+"/app", delay)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			line.Close()
		}
	})
	hosts, chroot := splitChroot(through)
	addrs := strings.Split(hosts, ",")
	if chroot != "/app" || len(addrs) != 2 || addrs[0] == targets[0] || addrs[1] == targets[1] {
		t.Fatalf("through %q: want two relays and the chroot /app", through)
	}
	client, err := net.Dial("tcp", addrs[1])
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var server net.Conn
	select {
	case server = <-accepted:
	case <-time.After(time.Minute):
		t.Fatal("the relay did not connect to its server")
	}
	defer server.Close()
	if server.LocalAddr().String() != targets[1] {
		t.Fatalf("the relay for %s connected to %s", addrs[1], server.LocalAddr())
	}

	// up: two writes back to back (a request pipelined behind another)
	sent := time.Now()
	for _, s := range []string{"create;", "getData;"} {
		if _, err := client.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	got := readN(t, server, len("create;getData;"))
	if since := time.Since(sent); string(got) != "create;getData;" || since < delay {
		t.Fatalf("the server read %q %v after the writes; want both, in order, after at least %v", got, since, delay)
	}
	// down
	sent = time.Now()
	if _, err := server.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, client, 5); string(got) != "reply" || time.Since(sent) < delay {
		t.Fatalf("the client read %q %v after the write; want it after at least %v", got, time.Since(sent), delay)
	}

	closed = true
	line.Close() // returns once every goroutine of the line has ended
	client.SetReadDeadline(time.Now().Add(time.Minute))
	if n, err := client.Read(make([]byte, 1)); err == nil {
		t.Fatalf("read %d bytes through a closed line", n)
	}
}

func readN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(time.Minute))
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("read: %v (got %q)", err, b)
	}
	return b
}

// TestHarnessLatency: with --latency every peer, the JVM's too, reaches
// the server through the line (no acquisition is quicker than a round trip
// of it), and the report says so. Correctness only, as TestHarness.
func TestHarnessLatency(t *testing.T) {
	const latency = 2 * time.Millisecond
	peers := "gocurator,gozk"
	if p, err := buildCurator(context.Background()); err == nil {
		p.remove()
		peers += ",curator"
	} else if os.Getenv("CI") != "" {
		t.Fatalf("the curator peer must run in CI: %v", err)
	}
	c, rep, out := runHarness(t, "--mode", "tiny", "--rounds", "1", "--peers", peers,
		"--workloads", "uncontended,contended", "--k", "2", "--latency", latency.String())
	if srv := rep.Environment["server"]; !strings.Contains(srv, "through a relay adding 2ms each way") {
		t.Errorf("server %q: the relay not told", srv)
	}
	if !strings.Contains(out, "latency: every peer reaches the server through a relay") {
		t.Error("the legend does not tell the latency")
	}
	if len(rep.Results) != len(strings.Split(peers, ","))*2 {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, r := range rep.Results {
		checkRun(t, c, r)
		if r.P50Ms < 2*latency.Seconds()*1000 {
			t.Errorf("%s %s: p50 %.3f ms, under one round trip of the line (%v)", r.Peer, r.Workload, r.P50Ms, 2*latency)
		}
	}
	for _, bad := range []string{"-1ms", "500us"} {
		if _, err := parseFlags([]string{"--latency", bad}, io.Discard); err == nil {
			t.Errorf("--latency %s accepted", bad)
		}
	}
}
