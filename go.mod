module github.com/gocurator/curator

go 1.24.0

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/go-zookeeper/zk v1.0.4
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.19.0
)
