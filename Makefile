# The two commands of the README:
#   make demo   runs the headline demo (starts a local ZooKeeper unless ZK_CONNECT is set)
#   make test   runs the whole test suite (lint, then go test -race) against a real ZooKeeper
# Both install what they need first (scripts/install-deps.sh).
# Also: make bench-peers (gocurator vs go-zookeeper vs Apache Curator on one
# server, the README's figures; BENCH_FLAGS="--json results.json" keeps every
# raw result), make bench (micro benchmarks, the telemetry's cost among them), make lint.

GO ?= go
TEST_TIMEOUT ?= 20m
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: demo test deps lint bench bench-peers

deps:
	@scripts/install-deps.sh

# The demo needs less: no Curator jars or JDK, and nothing with ZK_CONNECT.
demo:
	@scripts/install-deps.sh demo
	$(GO) run ./examples/demo

# Modules of their own (integrations with heavy dependencies), tested and
# linted beside the core module.
SUBMODULES := discovery/grpc

test: deps lint
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	@for m in $(SUBMODULES); do (cd $$m && $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...) || exit 1; done

# lint: gofmt, go vet and staticcheck must be clean (CI runs it through make test).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@for m in $(SUBMODULES); do (cd $$m && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...) || exit 1; done

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 2s -benchmem ./recipes/... ./internal/telemetry

bench-peers: deps
	$(GO) run ./bench --mode full $(BENCH_FLAGS)
