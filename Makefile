# The two commands of the README:
#   make demo   runs the headline demo (starts a local ZooKeeper unless ZK_CONNECT is set)
#   make test   runs the whole test suite (go vet + go test -race) against a real ZooKeeper
# Both install what they need first (scripts/install-deps.sh).
#   make bench-peers   gocurator vs go-zookeeper vs Apache Curator, the README's figures
#                      (BENCH_FLAGS="--json results.json" to keep every raw result)

GO ?= go
TEST_TIMEOUT ?= 20m

.PHONY: demo test deps vet bench bench-peers fuzz

deps:
	@scripts/install-deps.sh

demo: deps
	$(GO) run ./examples/demo

test: deps vet
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

vet:
	$(GO) vet ./...

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 2s ./recipes/...

bench-peers: deps
	$(GO) run ./bench --mode full $(BENCH_FLAGS)
