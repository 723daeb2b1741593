// Package nodes holds Curator's node recipes for Go: PersistentNode
// (Curator's PersistentNode, and PersistentEphemeralNode through
// WithMode), a node kept present while its owner lives, made again after
// a delete by someone else or a session loss, never doubled;
// PersistentTTLNode (Curator's PersistentTtlNode), a node that goes by
// itself some time after its owner stops; and GroupMember (Curator's
// GroupMember), a member's node in a group and a live view of the group.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
package nodes
