// Command metrics shows gocurator's metrics on a Prometheus /metrics
// endpoint. The application installs OpenTelemetry's SDK with the
// Prometheus exporter and gives its meter provider to each client
// (framework.WithMeterProvider); the recipes record with their client's.
// The demo: three workers, each with its own ZooKeeper session, contend for
// one lock; then a worker's network is cut (through a proxy) while it holds
// the lock, which it loses at once (SUSPENDED). At the end the program
// fetches its own /metrics and prints the gocurator lines: lock waits and
// holds, waiters, holdings, the loss and its reason, connection states,
// and every ZooKeeper call's duration.
//
//	go run ./examples/metrics              # starts a local ZooKeeper
//	ZK_CONNECT=host:2181 go run ./examples/metrics
//
// The exporter is this program's dependency, not the library's: gocurator
// itself uses OpenTelemetry's API only.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/gocurator/curator"
	"github.com/gocurator/curator/examples/internal/zkenv"
	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locks"
	"github.com/gocurator/curator/testing/zktest"
)

const (
	workers        = 3
	rounds         = 4
	sessionTimeout = 2 * time.Second
	path           = "/demo/metrics/lock"
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("[%5.2fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func main() { zkenv.Main(run) }

type worker struct {
	name  string
	proxy *zktest.Proxy
	c     *framework.Client
	m     *locks.Mutex
}

func run(ctx context.Context, srv *zktest.Server) error {
	fmt.Printf("gocurator metrics: %d workers\n\n", workers)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	// OpenTelemetry's SDK, read by the Prometheus exporter, served on
	// /metrics (a registry of our own: only what this program records).
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	say("serving metrics on http://%s/metrics", ln.Addr())

	var ws []*worker
	for i := 1; i <= workers; i++ {
		// Each worker reaches ZooKeeper through a proxy of its own, so that
		// the demo can cut one worker's network.
		px, err := zktest.NewProxy(srv.Addr())
		if err != nil {
			return err
		}
		defer px.Close()
		c, err := framework.New(px.Addr()+srv.Chroot(),
			framework.WithSessionTimeout(sessionTimeout),
			framework.WithMeterProvider(mp)) // the client and its recipes record here
		if err != nil {
			return err
		}
		defer c.Close()
		m, err := locks.NewMutex(c, path)
		if err != nil {
			return err
		}
		ws = append(ws, &worker{fmt.Sprintf("worker-%d", i), px, c, m})
	}

	// Contention: every worker takes the lock a few times.
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				t := time.Now()
				if err := w.m.Lock(ctx); err != nil {
					say("%s: %v", w.name, err)
					return
				}
				say("%s holds the lock (waited %v)", w.name, time.Since(t).Round(time.Millisecond))
				time.Sleep(50 * time.Millisecond) // the work
				if err := w.m.Unlock(ctx); err != nil {
					say("%s: %v", w.name, err)
				}
			}
		}()
	}
	wg.Wait()

	// A loss: the holder's network is cut.
	w := ws[0]
	if err := w.m.Lock(ctx); err != nil {
		return err
	}
	say("*** %s holds the lock; cutting its network ***", w.name)
	w.proxy.Blackhole()
	select {
	case <-w.m.Lost():
		say("%s was told: lock LOST (connection suspended)", w.name)
	case <-ctx.Done():
		return ctx.Err()
	}
	w.proxy.Heal()
	if err := w.m.Unlock(ctx); errors.Is(err, curator.ErrLockLost) {
		say("%s's Unlock: %v", w.name, err)
	} else if err != nil {
		return err
	}
	if err := w.c.BlockUntilConnected(ctx); err != nil {
		return err
	}
	if err := w.c.WaitBackground(ctx); err != nil { // the lost lock's node, deleted in the background
		return err
	}
	say("%s is connected again", w.name)

	// What a Prometheus server would scrape.
	fmt.Printf("\nGET http://%s/metrics (gocurator's lines, histogram buckets left out):\n\n", ln.Addr())
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	printed := 0
	for sc.Scan() {
		line := sc.Text()
		if !ours(line) || strings.Contains(line, "_bucket{") {
			continue
		}
		fmt.Println(line)
		printed++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if printed == 0 {
		return errors.New("no gocurator metric on /metrics")
	}
	return nil
}

// ours reports whether a line of the exposition is one of gocurator's
// metrics (or their HELP and TYPE lines).
func ours(line string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(line, "# HELP "), "# TYPE ")
	for _, p := range []string{"curator_", "zookeeper_", "db_client_operation_duration"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
