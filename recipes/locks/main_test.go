package locks_test

import (
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/locks"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// lockPath returns a lock path no other test uses.
func lockPath(t testing.TB) string { return testenv.Path(t, "/locktest") + "/lock" }

func newMutex(t testing.TB, c *framework.Client, path string, opts ...locks.Option) *locks.Mutex {
	t.Helper()
	m, err := locks.NewMutex(c, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
