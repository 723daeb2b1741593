package locks

import (
	"context"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/driver"
	"github.com/gocurator/curator/internal/layout"
)

// RevokeMessage ("__REVOKE__") is the data Revoke writes into a holder's
// node to ask it to release (Curator's LockInternals.REVOKE_MESSAGE).
const RevokeMessage = layout.RevokeMessage

// Revoke asks the holder of a lock node to release it (Curator's
// Revoker.attemptRevoke): it writes RevokeMessage into the node. Holders
// that armed revocation (WithRevocation, Curator's makeRevocable) release;
// others ignore it. A node already gone is not an error.
func Revoke(ctx context.Context, client *framework.Client, node string) error {
	return driver.Revoke(ctx, client, node)
}
