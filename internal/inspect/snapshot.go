package inspect

import (
	"context"
	"time"
)

// Take reads the subtree at path and recognises its recipes.
func Take(ctx context.Context, src Source, path string, o Options) (*Snapshot, error) {
	root, truncated, err := Read(ctx, src, path, o)
	if err != nil {
		return nil, err
	}
	return snapshot(path, root, truncated), nil
}

func snapshot(path string, root *Znode, truncated bool) *Snapshot {
	now := time.Now()
	recipes, problems := Recognize(root, now)
	if recipes == nil {
		recipes = []Recipe{}
	}
	return &Snapshot{Path: path, Time: now.UTC(), Recipes: recipes, Unreadable: problems, Truncated: truncated}
}
