package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
	"github.com/gocurator/curator/internal/recipe"
)

// simplePrefix names a Simple's items (Curator's and ZooKeeper's own queue
// recipe's "qn-").
const simplePrefix = layout.SimpleQueueName

// Simple is Curator's SimpleDistributedQueue (a port of ZooKeeper's own
// queue recipe): raw byte items, persistent sequential nodes
// path/qn-NNNNNNNNNN holding the bytes as they are, taken in order by
// blocking calls, with no consumer goroutine. The path and its parents are
// made as containers by the first Offer, so the server reaps an empty
// queue; a Take waiting on a reaped queue goes on waiting (CURATOR-308).
//
// Delivery is at most once: an item is deleted before it is returned, so a
// process that dies with it loses it, and so does a take whose delete
// succeeded but whose reply was lost (the retry finds the node gone and
// moves on, as Curator's). An Offer retried after a lost reply can leave
// the item twice (Curator's too). For at-least-once delivery, use a Queue
// with WithLockPath.
//
// Where it differs from Curator: Peek and Poll report an empty queue with
// ok == false (Curator returns null); Take and every call take a context
// (Curator's take blocks forever; its poll(timeout) is Poll with a
// deadline: use Take with a context). All methods are safe for concurrent
// use.
type Simple struct {
	client *framework.Client
	path   string
}

// NewSimple returns the queue at path. Bad input is an error wrapping
// curator.ErrInvalidArgument.
func NewSimple(client *framework.Client, path string) (*Simple, error) {
	if err := recipe.CheckArgs(client, "queue", path); err != nil {
		return nil, err
	}
	return &Simple{client: client, path: path}, nil
}

// Offer adds data at the back of the queue (Curator's offer).
func (s *Simple) Offer(ctx context.Context, data []byte) error {
	if ctx == nil {
		return recipe.ErrNilContext
	}
	_, err := s.client.Create(ctx, s.path+"/"+simplePrefix, data,
		framework.WithMode(framework.ModePersistentSequential), framework.WithParentContainers())
	if err != nil {
		return fmt.Errorf("queue %s: offer: %w", s.path, err)
	}
	return nil
}

// Peek returns the head of the queue without taking it; ok is false if the
// queue is empty.
func (s *Simple) Peek(ctx context.Context) (data []byte, ok bool, err error) {
	return s.head(ctx, false)
}

// Poll takes the head of the queue; ok is false if the queue is empty.
func (s *Simple) Poll(ctx context.Context) (data []byte, ok bool, err error) {
	return s.head(ctx, true)
}

// Take takes the head of the queue, waiting for one until ctx ends.
func (s *Simple) Take(ctx context.Context) ([]byte, error) {
	if ctx == nil {
		return nil, recipe.ErrNilContext
	}
	for {
		names, _, w, err := s.client.ChildrenW(ctx, s.path)
		if errors.Is(err, zk.ErrNoNode) { // not made yet, or reaped: wait for it
			var ok bool
			ok, _, w, err = s.client.ExistsW(ctx, s.path)
			if err == nil && ok {
				w.Stop()
				continue
			}
		}
		if err != nil {
			return nil, fmt.Errorf("queue %s: take: %w", s.path, err)
		}
		data, ok, err := s.takeFrom(ctx, names, true)
		if err != nil || ok {
			w.Stop()
			return data, err
		}
		select {
		case <-w.C():
		case <-ctx.Done():
			w.Stop()
			return nil, fmt.Errorf("queue %s: take: %w", s.path, ctx.Err())
		}
	}
}

func (s *Simple) head(ctx context.Context, take bool) ([]byte, bool, error) {
	if ctx == nil {
		return nil, false, recipe.ErrNilContext
	}
	names, _, err := s.client.Children(ctx, s.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("queue %s: %w", s.path, err)
	}
	return s.takeFrom(ctx, names, take)
}

// takeFrom reads (and with take deletes) the first of names, in order, that
// is still there.
func (s *Simple) takeFrom(ctx context.Context, names []string, take bool) ([]byte, bool, error) {
	names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, simplePrefix) })
	slices.Sort(names)
	for _, name := range names {
		p := s.path + "/" + name
		data, _, err := s.client.Get(ctx, p)
		if err == nil && take {
			err = s.client.Delete(ctx, p)
		}
		switch {
		case err == nil:
			return data, true, nil
		case errors.Is(err, zk.ErrNoNode): // taken by another
		default:
			return nil, false, fmt.Errorf("queue %s: %w", s.path, err)
		}
	}
	return nil, false, nil
}
