# weft — see README.md. `make demo` generates text; `make test` runs the tests.
GO ?= go
SHARED ?= ../shared
STORIES := $(SHARED)/models/stories260K/stories260K.gguf
BIN := bin

.PHONY: all build demo test test-noasm test-arm64 fuzz lint plugins proto clean gen-check

all: build

build:
	$(GO) build -o $(BIN)/weft ./cmd/weft

demo: build
	@if [ -f $(STORIES) ]; then \
		$(BIN)/weft run -m $(STORIES) --set ctx=512 -p "Once upon a time" -n 256 --temp 0.8 --seed 42; \
	else \
		echo "demo: $(STORIES) not found: synthesizing a tiny random-weight llama instead (its text is gibberish)"; \
		$(BIN)/weft synth -s llama --set hidden=64,layers=2,heads=4,ffn=128,vocab=512,ctx=256 --dtype f32 --seed 1 -o $(BIN)/tiny-random.gguf && \
		$(BIN)/weft run -m $(BIN)/tiny-random.gguf -p "Once upon a time" -n 32 --seed 42; \
	fi

test: lint build plugins
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags noasm ./kernels/...
	$(MAKE) gen-check
	$(MAKE) test-arm64
	$(MAKE) fuzz

# The arm64 kernels under qemu-user (Debian's qemu-user package): the
# kernel tests, every path against the Go fallback, on a CPU with dotprod
# and i8mm (-cpu max) and the matmul, row, quantizer and attention tests on
# one without (cortex-a57: the neon level must use base Advanced SIMD only);
# then the stories260K and mini-llama goldens. Without qemu it skips,
# except under CI=true. TestExpfSweep (pure Go, minutes under emulation)
# runs natively only.
QEMU_ARM64 ?= qemu-aarch64
test-arm64:
	@if ! command -v $(QEMU_ARM64) >/dev/null 2>&1; then \
		if [ "$$CI" = true ]; then echo "test-arm64: $(QEMU_ARM64) not found: install qemu-user"; exit 1; fi; \
		echo "test-arm64: $(QEMU_ARM64) not found: skipping the arm64 tests (apt-get install -y qemu-user)"; exit 0; \
	fi; \
	set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	GOARCH=arm64 $(GO) test -c -o "$$d/cpu.test" ./kernels/cpu; \
	GOARCH=arm64 $(GO) test -c -o "$$d/model.test" ./model; \
	echo "test-arm64: kernels/cpu, -cpu max"; \
	(cd kernels/cpu && $(QEMU_ARM64) -cpu max "$$d/cpu.test" -test.short -test.skip '^TestExpfSweep$$'); \
	echo "test-arm64: kernels/cpu matmuls, rows, quantizers, attention, -cpu cortex-a57 (no dotprod)"; \
	(cd kernels/cpu && $(QEMU_ARM64) -cpu cortex-a57 "$$d/cpu.test" -test.short -test.run '^(TestMatMul|TestNoAllocations|TestLevels|TestRowsGGExact|TestBinaryAndNorms|TestSumSqLevelsAgree|TestPackLayouts|TestQuantizeQ8_0MatchesReference|TestQuantizeQ8_KMatchesReference|TestF16Conversions|TestFloatTileMatchesGemv|TestF32AttentionRowsMatchGo|TestAttendF16GGMLOrder)'); \
	echo "test-arm64: model goldens, -cpu max"; \
	(cd model && $(QEMU_ARM64) -cpu max "$$d/model.test" -test.run '^(TestStoriesGolden|TestMiniLlamaGolden)$$')

# The generated amd64 kernels are what their avo generators write
# (kernels/cpu/_gen, its own module; `go run .` there regenerates them).
gen-check:
	cd kernels/cpu/_gen && $(GO) run . -check

# Each fuzzer runs briefly: long enough to catch regressions in CI. The
# budget is a count of inputs (about 3-10 s each here), not a duration: with
# a duration, Go 1.26's fuzzing coordinator can fail a target with a bare
# "context deadline exceeded" when the time runs out mid-input on a busy
# machine (golang/go#75804, fixed in Go 1.27), which reddened CI once with
# no crasher written. FuzzSpec's and FuzzHFConfigLoad's inputs go through
# the spec compiler (each parse compiles dozens of CEL expressions), a few
# dozen to a few hundred a second: they get fewer inputs, and their
# minimization is bounded too (minimizing a new input for the default 60 s
# made them look stalled).
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 200000x ./gguf
	$(GO) test -run '^$$' -fuzz FuzzSafetensorsHeader -fuzztime 200000x ./checkpoint
	$(GO) test -run '^$$' -fuzz '^FuzzUnpickle$$' -fuzztime 200000x ./checkpoint
	$(GO) test -run '^$$' -fuzz '^FuzzLlama2C$$' -fuzztime 20000x ./checkpoint
	$(GO) test -run '^$$' -fuzz FuzzHFTokenizer -fuzztime 200000x ./tokenizer
	$(GO) test -run '^$$' -fuzz FuzzLlama2CTokenizer -fuzztime 20000x ./tokenizer
	$(GO) test -run '^$$' -fuzz '^FuzzVocabTxt$$' -fuzztime 20000x ./tokenizer
	$(GO) test -run '^$$' -fuzz '^FuzzHFConfig$$' -fuzztime 20000x ./checkpoint
	$(GO) test -run '^$$' -fuzz FuzzRender -fuzztime 100000x ./chat
	$(GO) test -run '^$$' -fuzz FuzzParseGBNF -fuzztime 100000x ./grammar
	$(GO) test -run '^$$' -fuzz FuzzJSONSchema -fuzztime 50000x ./grammar
	$(GO) test -run '^$$' -fuzz FuzzRequestBody -fuzztime 20000x ./server
	$(GO) test -run '^$$' -fuzz '^FuzzSpec$$' -fuzztime 1000x -fuzzminimizetime 50x ./specs
	$(GO) test -run '^$$' -fuzz '^FuzzHFConfigLoad$$' -fuzztime 1000x -fuzzminimizetime 50x ./model

# gofmt and go vet; make test runs it first.
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

plugins:
	@if [ -d plugins/examples ]; then \
		for d in plugins/examples/*/; do $(GO) build -o $(BIN)/plugins/$$(basename $$d) ./$$d || exit 1; done; \
	fi

# Regenerates the plugin protocol's Go code (committed: CI needs no protoc).
# Needs protoc (apt-get install -y protobuf-compiler) and the Go generators:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.10
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
proto:
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" protoc -I plugins/proto \
		--go_out=plugins/proto/pluginpb --go_opt=paths=source_relative \
		--go-grpc_out=plugins/proto/pluginpb --go-grpc_opt=paths=source_relative \
		plugins/proto/plugin.proto

clean:
	rm -rf $(BIN)
