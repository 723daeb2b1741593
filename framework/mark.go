package framework

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// Mark is a watch on a node that is kept, not waited on: it tells, without
// a request, that the node has been neither changed nor deleted since the
// mark was set, as far as any later reply of this client can show. If
// Intact reports true after a call of this client returned, the server
// carried out that call while the marked node was still the same node,
// unchanged since the mark was set.
//
// Why that holds: ZooKeeper sends a session the events of its watches in
// order with the replies to its requests, on one connection. A change to
// the node that the server applied before that call is therefore read by
// the client, and the mark spent, before the call's reply arrives; and a
// new connection spends every mark made on an earlier one (its watches
// are set again, but a mark claims no more than one connection's order).
// So a mark may report a change that did not happen (a reconnection),
// never miss one that did.
//
// The lock driver marks a waiter's own node (MarkNode). The kept watch
// costs the server one watch per marked node and client, until the node
// changes or the session ends. There is no Curator counterpart.
type Mark struct {
	c     *Client
	key   watchKey
	e     *watchEntry
	epoch uint64
}

// Intact reports that the node has not changed since it was marked (see
// Mark). It makes no request.
func (m *Mark) Intact() bool {
	if m == nil || m.c.epoch.Load() != m.epoch {
		return false
	}
	w := m.c.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.entries[m.key] == m.e && m.e.armed // an entry leaves the map when it fires
}

// MarkNode sets a Mark on the node at path: a watched read of its data,
// in the retry loop, whose watch nobody waits on. It returns zk.ErrNoNode
// (wrapped) and no mark if the node does not exist. A mark set across a
// reconnection (the read retried) is never intact.
//
// The lock driver marks a waiter's own node, so that once its predecessor
// goes it knows, without a request, that its node was still there when
// the server deleted the predecessor (handoff.go).
func (c *Client) MarkNode(ctx context.Context, path string) (*Mark, error) {
	full, err := c.checkPath("mark", path)
	if err != nil {
		return nil, err
	}
	m, w := c.newMark(full, path)
	// A watched read even if a watch is armed: only one of this epoch's
	// connection proves anything.
	r := c.beginWatchedRead(m.key)
	_, err = call(c, ctx, "mark", path, func(conn *zk.Conn) (struct{}, error) {
		_, _, err := conn.Get(full)
		return struct{}{}, err
	})
	c.endWatchedRead(r, m.e, err)
	if err != nil {
		c.watches.failed(w, m.e)
		return nil, err
	}
	w.Stop() // the armed entry stays for the mark; no waiter does
	return m, nil
}

// newMark starts a Mark on the node at the server path full (userPath as
// the caller named it): the client's connection epoch, taken now, so
// before the mark's read is queued (a read answered on a later connection
// leaves the mark spent), and the watch entry it stands on, held by w
// until that read is done. Stop w then: the entry stays if the read armed
// it.
func (c *Client) newMark(full, userPath string) (m *Mark, w *Watch) {
	key := watchKey{full, watchData}
	m = &Mark{c: c, key: key, epoch: c.epoch.Load()}
	w, m.e, _ = c.watches.add(key, userPath)
	return m, w
}
