// Package shared holds Curator's shared values for Go (Curator's
// recipes.shared): Value (SharedValue), bytes in one node that every
// process reads, watched, and sets unconditionally or by compare-and-set
// on the version it read; and Count (SharedCount), an int in Curator's
// 4-byte format on a Value, which recipes/semaphore also takes as a
// semaphore's maximum.
//
// Migrating from Curator: https://github.com/gocurator/curator/blob/main/docs/migrating-from-curator.md
//
// # ZooKeeper layout (Curator's)
//
// One persistent node at the path, made by Start with the seed if it does
// not exist, its parents as container nodes. A Value's data is the raw
// bytes; a Count's is 4 bytes, big-endian two's complement (Java's
// ByteBuffer.putInt: 258 is 00 00 01 02), so Go and Java processes share
// one count. Close does not delete the node.
//
// # Following the node
//
// Each started Value keeps one data watch on its node and re-reads it
// after every event (a write, a delete, a session loss), in one goroutine;
// the local value only moves forward, by the zxid of the node's last
// write (Curator 5.7, CURATOR-688: by version, a node deleted and made
// again would be ignored until its version passed the old one). A node
// deleted by someone is watched for its re-creation, where Curator's
// SharedValue stops watching (a getData on a missing node sets no watch).
// Changed, AddListener and the value itself tell of every change.
package shared
