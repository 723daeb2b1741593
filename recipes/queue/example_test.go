package queue_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/queue"
	"github.com/gocurator/curator/testing/zktest"
)

// connect starts a throwaway ZooKeeper for an example and returns a client.
func connect() (*framework.Client, func()) {
	srv, err := zktest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	c, err := framework.New(srv.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); srv.Close() }
}

// A work queue with at-least-once delivery: the item is deleted only once
// the consumer returned nil.
func ExampleQueue() {
	c, stop := connect()
	defer stop()
	ctx := context.Background()
	done := make(chan string)
	q, err := queue.New(c, "/jobs", queue.String{}, func(ctx context.Context, job string) error {
		done <- job
		return nil
	}, queue.WithLockPath("/jobs-locks"))
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(ctx); err != nil {
		log.Fatal(err)
	}
	if err := q.PutMulti(ctx, []string{"resize cat.png", "resize dog.png"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	fmt.Println(<-done)
	// Output:
	// resize cat.png
	// resize dog.png
}

// Lower priorities first.
func ExamplePriority() {
	c, stop := connect()
	defer stop()
	ctx := context.Background()
	done := make(chan string, 3)
	q, err := queue.NewPriority(c, "/alerts", queue.String{}, func(ctx context.Context, a string) error {
		done <- a
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	for p, a := range map[int32]string{5: "disk 80%", -1: "site down", 2: "cert expires"} {
		if err := q.Put(ctx, a, p); err != nil {
			log.Fatal(err)
		}
	}
	if err := q.Start(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done)
	fmt.Println(<-done)
	fmt.Println(<-done)
	// Output:
	// site down
	// cert expires
	// disk 80%
}

// An item consumed no sooner than its time.
func ExampleDelay() {
	c, stop := connect()
	defer stop()
	ctx := context.Background()
	done := make(chan string)
	q, err := queue.NewDelay(c, "/reminders", queue.String{}, func(ctx context.Context, r string) error {
		done <- r
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(ctx); err != nil {
		log.Fatal(err)
	}
	at := time.Now().Add(200 * time.Millisecond)
	if err := q.Put(ctx, "stand-up", at); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-done, !time.Now().Before(at.Truncate(time.Millisecond)))
	// Output: stand-up true
}

// Items with ids, removed before they are consumed.
func ExampleIDQueue_Remove() {
	c, stop := connect()
	defer stop()
	ctx := context.Background()
	q, err := queue.NewIDQueue[string](c, "/orders", queue.String{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, id := range []string{"o-1", "o-2", "o-1"} {
		if err := q.Put(ctx, "ship "+id, id); err != nil {
			log.Fatal(err)
		}
	}
	n, err := q.Remove(ctx, "o-1")
	if err != nil {
		log.Fatal(err)
	}
	left, _ := q.Len(ctx)
	fmt.Println(n, "removed,", left, "left")
	// Output: 2 removed, 1 left
}

// Raw bytes, taken by blocking calls.
func ExampleSimple() {
	c, stop := connect()
	defer stop()
	ctx := context.Background()
	s, err := queue.NewSimple(c, "/inbox")
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Offer(ctx, []byte("hello")); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := s.Take(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, ok, _ := s.Poll(ctx)
	fmt.Println(string(b), ok)
	// Output: hello false
}

// Curator's ItemSerializer bytes.
func ExampleEncode() {
	fmt.Printf("% x\n", queue.Encode([]byte("ab"), []byte("")))
	items, err := queue.Decode(queue.Encode([]byte("ab")))
	fmt.Printf("%q %v\n", items, err)
	// Output:
	// 00 01 00 01 01 00 00 00 02 61 62 01 00 00 00 00 02
	// ["ab"] <nil>
}
