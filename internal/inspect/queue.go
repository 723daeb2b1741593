package inspect

import (
	"slices"
	"strings"

	"github.com/gocurator/curator/internal/layout"
)

// queue recognises a queue's layout (recipes/queue, Curator's
// DistributedQueue family and SimpleDistributedQueue): every child a
// childless item node named "queue-...<seq>" (or every one "qn-<seq>"),
// persistent: the queue's items; or ephemeral: the claims of a lock path,
// the items being consumed now. Items are listed in the order they were
// put (by sequence), the oldest first: a priority or delay queue takes
// them in another order, which each entry's name shows.
func (r *recognizer) queue(z *Znode) bool {
	first := z.Children[0]
	prefix := layout.QueueItemName
	if strings.HasPrefix(first.Name, layout.SimpleQueueName) {
		prefix = layout.SimpleQueueName
	}
	claims := first.ephemeral()
	for _, c := range z.Children {
		if c.Err != nil || c.Unread || len(c.Children) > 0 || c.ephemeral() != claims ||
			!strings.HasPrefix(c.Name, prefix) || !sequential(c.Name) {
			return false
		}
	}
	if claims && prefix == layout.SimpleQueueName {
		return false // SimpleDistributedQueue has no lock path
	}
	items := slices.Clone(z.Children)
	seq := func(z *Znode) string { return z.Name[len(z.Name)-layout.SeqLen:] }
	slices.SortFunc(items, func(a, b *Znode) int {
		if c := strings.Compare(seq(a), seq(b)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	rec := Recipe{Path: z.Path, Kind: KindQueue,
		Notes: []string{"items in the order they were put; a node made by PutMulti holds several items"}}
	role := RoleItem
	if claims {
		rec.Kind, role = KindQueueClaims, RoleClaim
		rec.Notes = []string{"the lock path of a queue: each node is an item being consumed, held by its consumer's session"}
	}
	for i, c := range items {
		rec.Items = append(rec.Items, newEntry(c, role, i+1, r.now))
	}
	rec.Depth = new(int)
	*rec.Depth = len(items)
	if e := rec.Items[0]; !e.Ctime.IsZero() {
		rec.Oldest, rec.OldestMillis = e.Age, &e.AgeMillis
	}
	r.add(rec)
	return true
}
