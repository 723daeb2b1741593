// Package nodes holds Curator's node recipes for Go: PersistentNode
// (Curator's PersistentNode, and PersistentEphemeralNode through
// WithMode), a node kept present while its owner lives, made again after
// a delete by someone else or a session loss, never doubled.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// Not yet here (issue 40): PersistentTtlNode and GroupMember.
package nodes
