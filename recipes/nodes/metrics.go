package nodes

import "github.com/gocurator/curator/internal/telemetry"

// recreated counts a create that made the node again, if it had been made
// (or found ours) before: gone since, deleted by someone or with a lost
// session (curator.node.recreations; framework's package documentation
// lists the metrics). Rare, so the client's telemetry is looked up per
// call.
func (n *PersistentNode) recreated() {
	select {
	case <-n.made:
		telemetry.ForClient(n.client).NodeRecreated(n.base)
	default: // the first make
	}
}
