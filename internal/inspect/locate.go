package inspect

import (
	"context"
	"time"

	"github.com/gocurator/curator/framework"
)

// Located is one node and, when it is a contender, lease or member of a
// recipe, that recipe and the node's role in it.
type Located struct {
	// Entry describes the node: as the recipe lists it (Role holder,
	// waiter, lease, member) when Contender, else with Role "node".
	Entry Entry
	// Recipe is the recipe the node belongs to (nil unless Contender).
	Recipe *Recipe
	// Contender: the node is a contender, lease or member of a recipe
	// recognised by its layout.
	Contender bool
	// Revocable: a lock's contender (mutex, read-write lock), the nodes a
	// revocation request is meant for.
	Revocable bool
	// Why the node's recipe is not known when its parent could not be read.
	Why string
}

// Locate reads node and its siblings and says what node is. An error
// reading node itself is returned (IsNotFound when it does not exist).
func Locate(ctx context.Context, src Source, node string) (*Located, error) {
	data, st, err := src.Get(ctx, node)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	self := &Znode{Path: node, Name: framework.NodeName(node), Stat: st, Data: data}
	loc := &Located{Entry: newEntry(self, RoleNode, 1, now)}
	if node == "/" {
		return loc, nil
	}
	parent, _, err := Read(ctx, src, framework.ParentPath(node), Options{MaxDepth: 1})
	if err != nil {
		if IsNotFound(err) || IsNoAuth(err) {
			loc.Why = "its parent could not be read: " + err.Error()
			return loc, nil
		}
		return nil, err
	}
	recipes, _ := Recognize(parent, now)
	for i := range recipes {
		rec := &recipes[i]
		lists := [][]Entry{rec.Holders, rec.Waiters, rec.Leases, rec.Members}
		if rec.Lock != nil {
			lists = append(lists, rec.Lock.Holders, rec.Lock.Waiters)
		}
		for _, l := range lists {
			for _, e := range l {
				if e.Path == node {
					loc.Entry, loc.Recipe, loc.Contender = e, rec, true
					loc.Revocable = rec.Kind == KindMutex || rec.Kind == KindReadWrite
					return loc, nil
				}
			}
		}
	}
	return loc, nil
}
