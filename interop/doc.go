// Package interop proves that gocurator and Apache Curator 5.4 (Debian's
// jars, Java 17) share locks, read-write locks, semaphores and barriers on
// the same ZooKeeper paths: its tests drive a small Java program
// (testdata/CuratorPeer.java, compiled at run time with javac) beside
// gocurator clients on one real server. It has only tests.
package interop
