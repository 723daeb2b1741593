package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The queue workload (issue 42): K producer sessions and K consumer
// sessions on one queue, --ops items in total, each queueItemSize bytes
// starting with its sequence number (8 bytes, big-endian). gocurator's
// recipes/queue Queue[[]byte], Curator 5.4's DistributedQueue
// (curator/QueueWorkloads.java, built with QueueBuilder, putInBackground
// off: a put returns when the item is there, as ours) and kazoo's Queue
// and LockingQueue (kazoo/kazoo_queue.py); go-zookeeper has none: n/a. Two
// variants, one job each:
//
//	lockpath  at least once: gocurator's and Curator's with a lock path,
//	          kazoo's LockingQueue (get, then consume)
//	nolock    at most once: no lock path (an item deleted before it is
//	          consumed), kazoo's Queue
//
// The producers put as fast as they go (a shared counter hands out the
// sequence numbers); every consumer session consumes as its library's
// consumer loop delivers. The figure is items/s end to end: --ops over the
// time from the first put to the take that completes the set; also the
// put rate (--ops over the time from the first put to the last put's
// return) and each item's put-to-take latency (p50, p99). The warm-up is
// the same on another queue. The check: after the last item, the
// consumers are closed (each waits for the item in hand), and every item
// put must have been taken exactly once: a lost, doubled or unknown item
// counts as a violation (the runs have no faults, so at-least-once's
// redelivery never has a reason to happen).

const (
	queueLockPath = "lockpath"
	queueNoLock   = "nolock"
	queueItemSize = 100
	// queueDrainWait is the longest the consumers may take no item while
	// some put are still not taken; past it, the missing ones are lost.
	queueDrainWait = 30 * time.Second
)

// queueVariants are the queue workload's jobs.
var queueVariants = []string{queueLockPath, queueNoLock}

// queueSession is a session of a library with a distributed queue
// (gocurator).
type queueSession interface {
	// queue makes a queue at path (with a lock path at lockPath, if not
	// ""), started; consume (nil: a queue that only puts) gets each item
	// taken, on the queue's consumer goroutine.
	queue(path, lockPath string, consume func([]byte)) (benchQueue, error)
}

type benchQueue interface {
	put(ctx context.Context, item []byte) error
	close()
}

// queueItem is item seq's payload.
func queueItem(seq int) []byte {
	b := make([]byte, queueItemSize)
	binary.BigEndian.PutUint64(b, uint64(seq))
	for i := 8; i < len(b); i++ {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// ledger records every item put and taken in one run.
type ledger struct {
	mu       sync.Mutex
	putAt    []int64 // monoNanos when its put started; 0: not put (yet)
	takenAt  []int64 // when first taken
	takes    []int32
	distinct int
	doubled  int
	unknown  int
	lastTake int64
	want     int           // items put, set once the producers are done; -1 before
	done     chan struct{} // closed when distinct reaches want
}

func newLedger() *ledger { return &ledger{want: -1, done: make(chan struct{})} }

func (l *ledger) grow(seq int) {
	for len(l.putAt) <= seq {
		l.putAt = append(l.putAt, 0)
		l.takenAt = append(l.takenAt, 0)
		l.takes = append(l.takes, 0)
	}
}

func (l *ledger) put(seq int, at int64) {
	l.mu.Lock()
	l.grow(seq)
	l.putAt[seq] = at
	l.mu.Unlock()
}

// take records an item taken: its first time, or a double.
func (l *ledger) take(item []byte) {
	now := monoNanos()
	l.mu.Lock()
	defer l.mu.Unlock()
	progress.Add(1)
	if len(item) != queueItemSize {
		l.unknown++
		fmt.Fprintf(os.Stderr, "VIOLATION: queue: an item of %d bytes, not one of ours\n", len(item))
		return
	}
	seq := int(binary.BigEndian.Uint64(item))
	if seq < 0 || seq >= len(l.putAt) || l.putAt[seq] == 0 {
		l.unknown++
		fmt.Fprintf(os.Stderr, "VIOLATION: queue: item %d taken, never put\n", seq)
		return
	}
	l.takes[seq]++
	if l.takes[seq] > 1 {
		l.doubled++
		fmt.Fprintf(os.Stderr, "VIOLATION: queue: item %d taken %d times\n", seq, l.takes[seq])
		return
	}
	l.takenAt[seq] = now
	l.lastTake = max(l.lastTake, now)
	l.distinct++
	if l.distinct == l.want {
		close(l.done)
	}
}

// expect sets the number of items put; done closes once all are taken.
func (l *ledger) expect(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.want = n
	if l.distinct == n {
		close(l.done)
	}
}

func (l *ledger) taken() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.distinct
}

// queueRun is what one run of the queue measured.
type queueRun struct {
	items              int
	wall, putWall, cpu time.Duration
	lat                []time.Duration
	violations         int64
}

// runQueue puts items (at least ops, and for at least minTime) from the
// producer sessions into a new queue at path, consumed by the consumer
// sessions, waits until every item is taken, and checks the ledger.
func runQueue(c *config, prod, cons []session, path string, lockPath bool, ops int, minTime time.Duration) queueRun {
	qpath, lpath := path+"/queue", ""
	if lockPath {
		lpath = path + "/locks"
	}
	l := newLedger()
	consumers := make([]benchQueue, len(cons))
	for i, s := range cons {
		qs, ok := s.(queueSession)
		if !ok {
			fail("%s has no queue", c.peer)
		}
		consumers[i] = must(qs.queue(qpath, lpath, l.take))
	}
	producers := make([]benchQueue, len(prod))
	for i, s := range prod {
		producers[i] = must(s.(queueSession).queue(qpath, "", nil))
	}
	var next, made atomic.Int64
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	var t0 time.Time
	var first int64 // monoNanos at the gate
	for _, q := range producers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			for i := int(next.Add(1) - 1); i < ops || minTime > 0 && time.Since(t0) < minTime; i = int(next.Add(1) - 1) {
				l.put(i, monoNanos())
				if err := q.put(bg, queueItem(i)); err != nil {
					fail("put of item %d: %v", i, err)
				}
				made.Add(1)
				progress.Add(1)
			}
		}()
	}
	ready.Wait()
	cpu0 := cpuTime()
	t0 = time.Now()
	first = monoNanos()
	close(gate)
	done.Wait()
	putWall := time.Since(t0)
	n := int(made.Load())
	l.expect(n)
	var violations int64
	tick := time.NewTicker(100 * time.Millisecond)
drain:
	for last, since := l.taken(), time.Now(); ; {
		select {
		case <-l.done:
			break drain
		case <-tick.C:
		}
		if got := l.taken(); got != last {
			last, since = got, time.Now()
		} else if time.Since(since) > queueDrainWait {
			fmt.Fprintf(os.Stderr, "VIOLATION: queue: %d of %d items never taken (none for %v)\n", n-got, n, queueDrainWait)
			violations += int64(n - got)
			break
		}
	}
	tick.Stop()
	cpu := cpuTime() - cpu0
	// An item counts as taken when its consumer is called, before its
	// delete (with a lock path): let the deletes finish before the close,
	// which may cut one short (Curator's interrupts its consumer thread).
	for end := time.Now().Add(queueDrainWait); must(prod[0].children(bg, qpath)) > 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	for _, q := range consumers { // each waits for the item in hand: a double shows now
		q.close()
	}
	for _, q := range producers {
		q.close()
	}
	// An item consumed but left in the queue would be taken again by the
	// next consumer: a double in waiting.
	if left := must(prod[0].children(bg, qpath)); left > 0 {
		fmt.Fprintf(os.Stderr, "VIOLATION: queue: %d items left in the queue after all were taken and the consumers closed\n", left)
		violations += int64(left)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	violations += int64(l.doubled + l.unknown)
	lat := make([]time.Duration, 0, n)
	for i := range n {
		if l.takes[i] > 0 {
			lat = append(lat, time.Duration(l.takenAt[i]-l.putAt[i]))
		}
	}
	return queueRun{items: n, wall: time.Duration(l.lastTake - first), putWall: putWall, cpu: cpu, lat: lat, violations: violations}
}

// queueWL is the queue workload's peer process.
func queueWL(c *config, lib library, k, ops int) *Result {
	if c.variant != queueLockPath && c.variant != queueNoLock {
		fail("--variant %q: want %s or %s", c.variant, queueLockPath, queueNoLock)
	}
	lock := c.variant == queueLockPath
	prod := openSessions(c, lib, k)
	cons := openSessions(c, lib, k)
	warm := runQueue(c, prod, cons, c.root+"/warm", lock, c.warmup, c.warmupTime)
	t := runQueue(c, prod, cons, c.root+"/items", lock, ops, 0)
	r := result(c, lib, t.items, t.wall, t.cpu, t.lat)
	r.Variant = c.variant
	r.WarmupOps, r.WarmupS = warm.items, round3(warm.wall.Seconds())
	r.PutPerS = round3(float64(t.items) / t.putWall.Seconds())
	r.Violations = warm.violations + t.violations
	r.Checked = t.items
	for _, s := range append(prod, cons...) {
		s.close()
	}
	return r
}
