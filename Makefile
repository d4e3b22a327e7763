# Hindsight — two commands on a fresh machine:
#   make dev    set everything up and run the whole stack in one process
#   make test   set everything up and run every test
# Everything fetched is cached ($HOME/.cache/hindsight, Go's module and
# build caches), so the second run is fast.

SHELL       := bash
.SHELLFLAGS := -eu -o pipefail -c
GO          ?= go
CACHE       ?= $(or $(HINDSIGHT_CACHE),$(HOME)/.cache/hindsight)
VERSION     ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -X main.version=$(VERSION)
BIN         := bin/hindsight

export HINDSIGHT_CACHE := $(CACHE)
export CGO_ENABLED     ?= 0

.PHONY: dev test bench build deps chdb tools vet check clean

## dev: build and run `hindsight dev` (Temporal + UI, worker, MCP, stores) on ./data
dev: build chdb
	./$(BIN) dev

## test: vet, then every test (the chDB acceptance suite and end-to-end tests included)
test: deps chdb tools vet
	$(GO) test -count=1 -timeout 20m ./...

## bench: benchmarks for the stores and recall (slow; see README for the numbers)
bench: deps chdb
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 120m ./store/... ./recall/...

## build: the hindsight binary in ./bin
build: deps
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/hindsight

## deps: Go modules, into Go's module cache
deps:
	$(GO) mod download

## chdb: the embedded ClickHouse engine (libchdb.so from npm), into $(CACHE)
chdb:
	bash scripts/fetch-chdb.sh

## tools: Debian packages the tests use (docker-compose validates the compose file)
tools:
	bash scripts/install-tools.sh

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
