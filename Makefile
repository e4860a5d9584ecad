# shirube — make targets. Quick start: `make demo` and `make test`.
GO      ?= go
BIN     := bin/shirube
DEMO    := .demo
export GOFLAGS := -buildvcs=false

.PHONY: all build deps test vet staticcheck race demo bench bench-qa bench-scale clean fuzz model reliability

# VERSION is what `shirube version` prints; a build outside a tagged checkout
# says "dev".
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# STATICCHECK is run from the Go module proxy at a pinned version that knows
# Go 1.26; `go run` caches the build, so only the first run downloads it.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# RACE_PKGS are the packages that run goroutines of their own; their tests
# also run under the race detector.
RACE_PKGS := ./internal/index ./internal/web ./internal/auditlog ./internal/assistant ./internal/eval/batch ./internal/logwriter

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/shirube

deps:
	@bash scripts/install-deps.sh all

# vet also checks that go.mod and go.sum are tidy (direct dependencies
# listed as such, nothing unused).
vet:
	$(GO) mod tidy -diff
	$(GO) vet ./...
	cd bench/peers && $(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) ./...

race:
	$(GO) test -race -count=1 -timeout 30m $(RACE_PKGS)

# test installs what is missing (apt, as root), then vets, runs staticcheck,
# every test, and the concurrent packages' tests again under the race detector.
test: deps vet staticcheck
	$(GO) test -count=1 -timeout 30m ./...
	$(MAKE) race

# reliability runs the crash, switch, PostgreSQL audit outage, hostile-PDF,
# live-index and load cases of scripts/reliability.sh (about 4 minutes;
# servers on 127.0.0.1 only) and exits non-zero when one fails.
reliability:
	@bash scripts/reliability.sh

# demo indexes the bundled corpus and answers with no API key.
demo: build
	@bash scripts/install-deps.sh pdf
	@rm -rf $(DEMO)
	$(BIN) index --data examples/data --database $(DEMO)/database --index $(DEMO)/index
	$(BIN) search --index $(DEMO)/index "アカウントロックアウトの解除手順"
	$(BIN) ask --index $(DEMO)/index --logs $(DEMO)/logs "アカウントロックアウトの解除手順は？"
	$(BIN) ask --index $(DEMO)/index --logs $(DEMO)/logs "マルウェアに感染した端末の隔離手順は？"
	$(BIN) ask --index $(DEMO)/index --logs $(DEMO)/logs "ログファイルを削除する方法は？"

bench: build
	$(BIN) bench beir --dir ../shared/datasets/jsquad-valid --mode hybrid

# bench-qa measures answers on qa-ja-docs: the five PDFs and six law pages it
# asks about are copied into one data folder (the text twins are left out so
# each law is indexed once).
QA := ../shared/datasets
bench-qa: build
	@bash scripts/install-deps.sh pdf
	@mkdir -p .bench/qa-data
	@cp $(QA)/pdf-ja/*.pdf $(QA)/law-html-ja/html/*.html .bench/qa-data/
	$(BIN) bench qa --questions $(QA)/qa-ja-docs/questions.jsonl --data .bench/qa-data --index .bench/qa-index --out .bench/qa-results.csv

# bench-scale draws the scale curve on the law corpus (unpacked outside the
# repository: LAW_CORPUS=DIR; see ../shared/datasets/law-corpus-ja/README.md).
# The default points stop at 280k chunks (12.7 GiB build peak today); the
# whole corpus (POINTS=...,all: 515,855 chunks) needs about 23 GiB today.
# The corpus is unpacked once into LAW_CORPUS when it is not there yet.
LAW_CORPUS ?= /tmp/shirube-law-corpus-ja
POINTS     ?= 10000,50000,100000,280000
bench-scale: build
	@test -f $(LAW_CORPUS)/index.tsv || { mkdir -p $(LAW_CORPUS) && tar xJf $(QA)/law-corpus-ja/law-corpus-ja.tar.xz -C $(LAW_CORPUS) --strip-components=1; }
	$(BIN) bench scale --corpus $(LAW_CORPUS) --points $(POINTS) --png docs/scale.png

# model re-creates the learned reader (internal/reader/model.json) from
# JaQuAD train beside the checkout (../shared/datasets/jaquad-train).
model: build
	$(BIN) train --training-data $(QA)/jaquad-train/train.json.xz --out internal/reader/model.json

# fuzz runs every fuzz target of the module (found by `go test -list`) for
# FUZZTIME each.
FUZZTIME ?= 10s
fuzz:
	GO=$(GO) bash scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin $(DEMO)
