package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// The --latency line: a relay in the harness process between every peer
// and the server, which delivers each chunk of bytes one delay after it
// read it, in both directions. Loopback answers in tens of microseconds,
// so a round trip there costs mostly CPU, which client and server share on
// these machines; across a network each round trip saved saves the wire's
// latency too. The line adds that latency the way a wire does: bytes in
// flight together are delayed once, not one chunk after the other (as
// testing/zktest's Proxy.SetDelay does, for faults), so a request sent
// right behind another (gocurator's parent read behind its create) waits
// as long as the first. Every peer goes through it, the JVM's too. Its
// delays are sleeps, which an idle Go process ends no sooner than about
// 1.1 ms: --latency is at least minLatency, and each chunk may be late by
// a tenth of a millisecond or so, the same for every peer.
type latencyLine struct {
	delay time.Duration
	lns   []net.Listener
	wg    sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

const minLatency = time.Millisecond

// startLatency starts one relay per server of connect (a chroot kept) and
// returns the connect string through them.
func startLatency(connect string, delay time.Duration) (*latencyLine, string, error) {
	if delay <= 0 {
		return nil, "", fmt.Errorf("--latency %v: want a positive delay", delay)
	}
	l := &latencyLine{delay: delay, conns: map[net.Conn]struct{}{}}
	hosts, chroot := splitChroot(connect)
	var through []string
	for _, target := range strings.Split(hosts, ",") {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			l.Close()
			return nil, "", err
		}
		l.lns = append(l.lns, ln)
		through = append(through, ln.Addr().String())
		l.wg.Add(1)
		go l.serve(ln, target)
	}
	return l, strings.Join(through, ",") + chroot, nil
}

func (l *latencyLine) serve(ln net.Listener, target string) {
	defer l.wg.Done()
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", target)
		if err != nil || !l.track(client, server) {
			client.Close()
			if server != nil {
				server.Close()
			}
			continue
		}
		l.wg.Add(2)
		go l.carry(client, server)
		go l.carry(server, client)
	}
}

// track registers a connection's two ends; false once the line is closed.
func (l *latencyLine) track(cs ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	for _, c := range cs {
		l.conns[c] = struct{}{}
	}
	return true
}

func (l *latencyLine) untrack(cs ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		delete(l.conns, c)
	}
}

// chunk is bytes read from one end, due at the other end at due.
type chunk struct {
	b   []byte
	due time.Time
}

// carry copies src to dst, each chunk delivered delay after it was read;
// the reading goes on meanwhile. An end that fails closes both.
func (l *latencyLine) carry(src, dst net.Conn) {
	defer l.wg.Done()
	defer l.untrack(src, dst)
	inFlight := make(chan chunk, 1024) // full: reading waits, as TCP's window would
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range inFlight {
			if d := time.Until(c.due); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(c.b); err != nil {
				src.Close()
				dst.Close()
				for range inFlight { // let the reader end
				}
				return
			}
		}
		// src ended: what was read is delivered, then dst ends too
		dst.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			inFlight <- chunk{append([]byte(nil), buf[:n]...), time.Now().Add(l.delay)}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				dst.Close()
			}
			close(inFlight)
			<-done
			return
		}
	}
}

// Close stops the relays and closes every connection through them.
func (l *latencyLine) Close() {
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	for _, ln := range l.lns {
		ln.Close()
	}
	l.wg.Wait()
}
