package framework_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocurator/curator/framework"
)

// ChildrenShared: many concurrent callers share reads, yet each sees its own
// write (a read it joins was sent after it called), and a View is computed
// once per shared answer.
func TestChildrenShared(t *testing.T) {
	c := newClient(t, shared.ConnectString(), framework.WithNamespace(uniq("shared")))
	ctx := testCtx(t, waitShort)
	if _, err := c.Create(ctx, "/p", nil); err != nil {
		t.Fatal(err)
	}
	var views atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("n%02d", i)
			if _, err := c.Create(ctx, "/p/"+name, nil); err != nil {
				t.Error(err)
				return
			}
			sc, err := c.ChildrenShared(ctx, "/p")
			if err != nil {
				t.Error(err)
				return
			}
			if !slices.Contains(sc.Names(), name) {
				t.Errorf("%s does not see its own node in %v", name, sc.Names())
			}
			sorted := sc.View("sorted", func(names []string) any {
				views.Add(1)
				s := slices.Clone(names)
				slices.Sort(s)
				return s
			}).([]string)
			if len(sorted) != len(sc.Names()) {
				t.Error("view of another answer")
			}
		}()
	}
	wg.Wait()
	if v := views.Load(); v < 1 || v > 50 {
		t.Fatalf("%d views computed", v)
	}
	t.Logf("50 callers, %d distinct shared answers", views.Load())
	if _, err := c.ChildrenShared(ctx, "bad"); err == nil {
		t.Fatal("invalid path accepted")
	}
}
