package multilock_test

import (
	"fmt"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// paths returns n lock paths no other test uses.
func paths(t testing.TB, n int) []string {
	base := testenv.Path(t, "/mltest")
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/lock-%d", base, i)
	}
	return out
}

// noNodes fails unless no path has a child on the server.
func noNodes(t testing.TB, c *framework.Client, ps ...string) {
	t.Helper()
	for _, p := range ps {
		if kids := testenv.Children(t, c, p); len(kids) != 0 {
			t.Errorf("%s still has %v", p, kids)
		}
	}
}

func mutex(t testing.TB, c *framework.Client, p string) *locks.Mutex {
	t.Helper()
	m, err := locks.NewMutex(c, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
