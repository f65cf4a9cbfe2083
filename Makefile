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
	$(GO) test -race -count=1 -timeout 15m ./...
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

# Short fuzzing of every parser; FUZZTIME=5m for a longer run.
FUZZTIME ?= 30s
# Go shrinks each new input for up to 60 s by default, which on a parser
# with kilobyte seeds (the inventory, the config) is the whole run.
FUZZMINIMIZE ?= 5s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/recordbatch
	$(GO) test -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/recordbatch
	$(GO) test -run '^$$' -fuzz '^FuzzRecoverSegment$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/embedded
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeProducerSnapshot$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/embedded
	$(GO) test -run '^$$' -fuzz '^FuzzRequest$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/kafkawire
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/syslog
	$(GO) test -run '^$$' -fuzz '^FuzzFraming$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/syslog
	$(GO) test -run '^$$' -fuzz '^FuzzRFC5424AgainstGoSyslog$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/syslog
	$(GO) test -run '^$$' -fuzz '^FuzzAppendString$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeLog$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzPointAppendJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzMetricAppendJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzEventAppendJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzMnemonic$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzKeywordsChangeNothing$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzBigramsHoldSubstrings$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzEachPair$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzLowerLookups$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzFastMatchAgreesWithPatterns$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzFinder$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzMetricsWorker$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzSyslogWorker$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzInventoryNames$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzStr$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzDecodePoint$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeEvent$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeShaped$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./telemetry
	$(GO) test -run '^$$' -fuzz '^FuzzFlatten$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/gnmi
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/trap
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/snmp/profile
	$(GO) test -run '^$$' -fuzz '^FuzzHandle$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/snmp/sim
	$(GO) test -run '^$$' -fuzz '^FuzzSNMPSection$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./configs
	$(GO) test -run '^$$' -fuzz '^FuzzSizeAndDuration$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./configs
	$(GO) test -run '^$$' -fuzz '^FuzzReplayOffsets$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/embedded
	$(GO) test -run '^$$' -fuzz '^FuzzSealedIndexes$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/embedded
	$(GO) test -run '^$$' -fuzz '^FuzzTopicMeta$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/embedded
	$(GO) test -run '^$$' -fuzz '^FuzzWireGroups$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./broker/embedded
	$(GO) test -run '^$$' -fuzz '^FuzzFramingSplitReads$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/syslog
	$(GO) test -run '^$$' -fuzz '^FuzzOctetCountedRoundTrip$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/syslog
	$(GO) test -run '^$$' -fuzz '^FuzzLineFramedRoundTrip$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/syslog
	$(GO) test -run '^$$' -fuzz '^FuzzStartEngine$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/trap
	$(GO) test -run '^$$' -fuzz '^FuzzNormalizeOID$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/snmp/profile
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./collectors/gnmi/gpath
	$(GO) test -run '^$$' -fuzz '^FuzzParseInventory$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzParseSyslogRules$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzTrapEvent$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./enrich
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./configs
	$(GO) test -run '^$$' -fuzz '^FuzzBrokerAddress$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./configs
	$(GO) test -run '^$$' -fuzz '^FuzzExpandRefs$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./configs
	$(GO) test -run '^$$' -fuzz '^FuzzKafkaSinkLoop$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./configs
	$(GO) test -run '^$$' -fuzz '^FuzzListenersBind$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./configs
	$(GO) test -run '^$$' -fuzz '^FuzzWebhookTemplate$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./configs
	$(GO) test -run '^$$' -fuzz '^FuzzRestoreAlerts$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./sinks/webhook

clean:
	rm -rf bin weir-data
