package interop_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/leader"
)

// BenchmarkLeaderVsCurator measures leader election beside Curator 5.4's
// LeaderLatch in one run, on one ZooKeeper server, each side timing itself
// in its own process (the Java peer's bench-* commands):
//
//   - election: 100 participants, each on a client (session) of its own,
//     started at once; the time from the first start to the first leader;
//   - failover: the leader leaves (its node deleted, as when the server
//     expires its session) and the time until the next participant leads
//     (gocurator: its Campaign returns; Curator: isLeader is called).
//
// It reports the medians and the ratios gocurator/Curator (below 1: faster).
// A harness, not a loop: run it once with
//
//	go test -run '^$' -bench LeaderVsCurator -benchtime 1x ./interop/
func BenchmarkLeaderVsCurator(b *testing.B) {
	e := setup(b)
	java := e.startPeers(b, 1)[0]
	const (
		participants   = 100
		electionRounds = 3
		failoverRounds = 20
	)
	for range b.N {
		root := fmt.Sprintf("/bench-leader/%d", time.Now().UnixNano())
		jElection := parseMs(b, java.must(fmt.Sprintf("bench-election %s %s/curator-election %d %d", e.zk.ConnectString(), root, participants, electionRounds)))
		jFailover := parseMs(b, java.must(fmt.Sprintf("bench-failover %s %s/curator-failover %d", e.zk.ConnectString(), root, failoverRounds)))
		gElection := goBenchElection(b, e, root+"/go-election", participants, electionRounds)
		gFailover := goBenchFailover(b, e, root+"/go-failover", failoverRounds)
		b.ReportMetric(median(gElection), "go-election-ms")
		b.ReportMetric(median(jElection), "curator-election-ms")
		b.ReportMetric(median(gElection)/median(jElection), "election-ratio")
		b.ReportMetric(median(gFailover), "go-failover-ms")
		b.ReportMetric(median(jFailover), "curator-failover-ms")
		b.ReportMetric(median(gFailover)/median(jFailover), "failover-ratio")
		b.Logf("election of %d (ms): gocurator %v, Curator %v", participants, gElection, jElection)
		b.Logf("failover (ms): gocurator %v, Curator %v", gFailover, jFailover)
	}
}

func parseMs(b *testing.B, s string) []float64 {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			b.Fatalf("peer answer %q: %v", s, err)
		}
		out = append(out, v)
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func benchClient(b *testing.B, e *env) *framework.Client {
	c, err := framework.New(e.zk.ConnectString(), framework.WithSessionTimeout(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.BlockUntilConnected(ctx); err != nil {
		b.Fatal(err)
	}
	return c
}

// goBenchElection is bench-election for gocurator's Latch.
func goBenchElection(b *testing.B, e *env, path string, n, rounds int) []float64 {
	cs := make([]*framework.Client, n)
	for i := range cs {
		cs[i] = benchClient(b, e)
		defer cs[i].Close()
	}
	var out []float64
	for r := range rounds {
		p := fmt.Sprintf("%s/%d", path, r)
		first := make(chan struct{})
		var once sync.Once
		ls := make([]*leader.Latch, n)
		for i := range ls {
			l, err := leader.NewLatch(cs[i], p, "p"+strconv.Itoa(i))
			if err != nil {
				b.Fatal(err)
			}
			l.AddListener(leader.ListenerFuncs{OnLeader: func() { once.Do(func() { close(first) }) }})
			ls[i] = l
		}
		t0 := time.Now()
		for _, l := range ls {
			if err := l.Start(); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-first:
		case <-time.After(time.Minute):
			b.Fatal("no leader in a minute")
		}
		out = append(out, ms(time.Since(t0)))
		for _, l := range ls {
			for l.Node() == "" {
				time.Sleep(time.Millisecond)
			}
		}
		for _, l := range ls {
			l.Close()
		}
	}
	return out
}

// goBenchFailover is bench-failover for gocurator's Election: the leader
// closes; the next one's Campaign returns.
func goBenchFailover(b *testing.B, e *env, path string, rounds int) []float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs := []*framework.Client{benchClient(b, e), benchClient(b, e)}
	defer cs[0].Close()
	defer cs[1].Close()
	lead, err := leader.NewElection(cs[0], path, "a")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := lead.Campaign(ctx); err != nil {
		b.Fatal(err)
	}
	var out []float64
	for r := range rounds {
		next, err := leader.NewElection(cs[(r+1)%2], path, "n"+strconv.Itoa(r))
		if err != nil {
			b.Fatal(err)
		}
		won := make(chan error, 1)
		go func() { _, err := next.Campaign(ctx); won <- err }()
		for {
			ps, err := next.Participants(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if len(ps) == 2 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		t0 := time.Now()
		lead.Close()
		if err := <-won; err != nil {
			b.Fatal(err)
		}
		out = append(out, ms(time.Since(t0)))
		lead = next
	}
	lead.Close()
	return out
}
