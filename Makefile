# weir: two commands to know.
#   make run    start weir on the embedded broker (data in ./weir-data)
#   make test   everything CI checks: formatting, vet, a macOS build, all tests with -race, every benchmark once

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
ARGS    ?=

.PHONY: run build test lint bench fuzz clean

# Built, then run: `go run` exits 1 when Ctrl-C stops the program, even
# when weir shut down cleanly, and make would report that as an error.
run: build
	./bin/weir run $(ARGS)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/weir ./cmd/weir
	$(GO) build -o bin/weir-sim ./cmd/weir-sim

test: lint
	@# -p 3 on CI's 2 cores: many tests wait on peers and timers, and
	@# with two packages at a time the cores were half idle (15 min
	@# against 12 at -p 3)
	$(GO) test -race -p 3 -count=1 -timeout 15m ./...
	@# every benchmark once, so one that no longer runs fails CI
	$(GO) test -run '^$$' -bench . -benchtime 1x -count=1 ./... > /dev/null

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@# Linux-only calls stay behind build tags: weir builds on macOS too
	GOOS=darwin $(GO) build ./...

# Go benchmarks with allocations, then the broker's figures as a table with
# their baselines (plain file write, kfake) measured in the same run, then
# enrichment's end to end.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./broker/...
	WEIR_BENCH=1 $(GO) test -count=1 -run TestBrokerFigures -v -timeout 30m ./internal/brokerbench
	WEIR_BENCH=1 $(GO) test -count=1 -run TestEnrichFigures -v -timeout 30m ./internal/enrichbench

# Short fuzzing of every fuzz target, found in the tests (so a new one is
# not left out); FUZZTIME=5m for a longer run.
FUZZTIME ?= 30s
# Go shrinks each new input for up to 60 s by default, which on a parser
# with kilobyte seeds (the inventory, the config) is the whole run.
FUZZMINIMIZE ?= 5s
fuzz:
	@grep -r --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' . | sed 's|^\(.*\)/[^/]*:func |\1 |' | sort -u | \
	while read -r dir target; do \
		echo "$(GO) test -run '^$$' -fuzz '^$$target\$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$dir"; \
		$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) "$$dir" || exit 1; \
	done

clean:
	rm -rf bin weir-data
