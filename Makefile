# hrsync. `make test` is what CI runs (.ci/run).

SHELL := /bin/bash
# Go on a fresh machine lives in /usr/local/go.
export PATH := /usr/local/go/bin:$(PATH)

GO ?= go
# Arguments for `make run`, after `serve`.
ARGS ?=
# Extra go test flags for `make test`, e.g. make test TESTFLAGS='-run TestX -v'
TESTFLAGS ?=
# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 30s

.DEFAULT_GOAL := build
.PHONY: test build run bench fuzz lint release-check

# gofmt, go vet, staticcheck, go test -race (installs Postgres/gcc when root
# and missing; see the script).
test:
	bash scripts/test.sh $(TESTFLAGS)

# gofmt, go vet and staticcheck only.
lint:
	HRSYNC_LINT_ONLY=1 bash scripts/test.sh

build:
	$(GO) build -o bin/hrsync ./cmd/hrsync

run:
	$(GO) run ./cmd/hrsync serve $(ARGS)

# Checks .goreleaser.yaml and builds a snapshot release into dist/, offline, publishing nothing
# (installs the pinned goreleaser when missing; see docs/development.md#releasing).
release-check:
	bash scripts/release-check.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Runs every Fuzz* target of every package for $(FUZZTIME) each, one at a
# time (go test -fuzz takes one package and one target per run), e.g.
#   make fuzz FUZZTIME=5m
fuzz:
	@set -euo pipefail; found=0; \
	for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			found=1; \
			echo "==> $$pkg $$target for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done; \
	if [[ $$found == 0 ]]; then echo "no fuzz targets"; fi
