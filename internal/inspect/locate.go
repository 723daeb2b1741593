package inspect

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/layout"
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
	// revocation request is meant for, whose data is a lock's default (an
	// address, or nothing): Curator's LeaderSelector and ours use the
	// mutex layout with the participant id as data, which the request
	// would overwrite (so would it a lock's data set by its application).
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
	parent, truncated, err := Read(ctx, src, framework.ParentPath(node), Options{MaxDepth: 1})
	if err != nil {
		if IsNotFound(err) || IsNoAuth(err) {
			loc.Why = "its parent could not be read: " + err.Error()
			return loc, nil
		}
		return nil, err
	}
	if truncated {
		loc.Why = fmt.Sprintf("its parent has more than %d children, more than this tool reads: its recipe is not known", DefaultMaxNodes)
		return loc, nil
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
					loc.Revocable = (rec.Kind == KindMutex || rec.Kind == KindReadWrite) && defaultLockData(data)
					return loc, nil
				}
			}
		}
	}
	return loc, nil
}

// defaultLockData reports whether a lock node's data is what Curator and
// gocurator write by default (this host's address, or nothing when it has
// none), or a revocation request already.
func defaultLockData(data []byte) bool {
	return len(data) == 0 || string(data) == layout.RevokeMessage || net.ParseIP(string(data)) != nil
}
