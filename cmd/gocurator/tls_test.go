package main_test

import (
	"strings"
	"testing"

	"github.com/gocurator/curator/internal/testenv"
)

// --tls-ca reaches ZooKeeper's secure client port; without it the command
// fails within --timeout.
func TestTLS(t *testing.T) {
	srv := testenv.StartTLSServer(t)
	addr := srv.Addr
	r := gocurator(t, "", nil, "inspect", "/", "--json", "--connect", addr, "--tls-ca", srv.CA, "--timeout", "30s")
	if r.code != 0 || !strings.Contains(r.stdout, `"path": "/"`) {
		t.Fatalf("inspect over TLS: %s", r)
	}
	r = gocurator(t, "", nil, "inspect", "/", "--connect", addr, "--timeout", "3s")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot connect") {
		t.Errorf("inspect of the TLS port in plain TCP: %s; want exit 1", r)
	}
	r = gocurator(t, "", nil, "inspect", "/", "--connect", addr, "--tls-ca", srv.Keystore+".missing", "--timeout", "3s")
	if r.code != 2 {
		t.Errorf("a --tls-ca that does not exist: %s; want exit 2", r)
	}
}
