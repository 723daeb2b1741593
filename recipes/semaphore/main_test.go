package semaphore_test

import (
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testenv"
	"github.com/gocurator/curator/recipes/semaphore"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func semPath(t testing.TB) string { return testenv.Path(t, "/semtest") }

func newSem(t testing.TB, c *framework.Client, path string, max int, opts ...semaphore.Option) *semaphore.Semaphore {
	t.Helper()
	s, err := semaphore.New(c, path, max, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// leaseNodes returns the lease nodes on the server (none if the path is gone).
func leaseNodes(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	return testenv.Children(t, c, path+"/leases")
}
