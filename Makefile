# shirube — make targets. Quick start: `make demo` and `make test`.
GO      ?= go
BIN     := bin/shirube
DEMO    := .demo
export GOFLAGS := -buildvcs=false

.PHONY: all build deps test vet demo bench bench-qa bench-scale clean fuzz

all: build

build:
	$(GO) build -o $(BIN) ./cmd/shirube

deps:
	@bash scripts/install-deps.sh all

vet:
	$(GO) vet ./...
	cd bench/peers && $(GO) vet ./...

# test installs what is missing (apt, as root), then vets and runs every test.
test: deps vet
	$(GO) test -count=1 -timeout 30m ./...

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
# POINTS=10000,50000,100000 leaves out the whole corpus (≈ 8 GiB peak today).
LAW_CORPUS ?= /work/data/law-corpus-ja
POINTS     ?= 10000,50000,100000,all
bench-scale: build
	$(BIN) bench scale --corpus $(LAW_CORPUS) --points $(POINTS) --png docs/scale.png

fuzz:
	$(GO) test ./internal/chunk -run '^$$' -fuzz FuzzSplit -fuzztime 30s
	$(GO) test ./internal/document -run '^$$' -fuzz FuzzLayoutPDFPage -fuzztime 30s
	$(GO) test ./internal/document -run '^$$' -fuzz FuzzStructureLegal -fuzztime 30s
	$(GO) test ./internal/document -run '^$$' -fuzz FuzzParseBBoxLayout -fuzztime 30s
	$(GO) test ./internal/analysis -run '^$$' -fuzz FuzzDecodeFlat -fuzztime 30s
	$(GO) test ./internal/index -run '^$$' -fuzz FuzzChunkFile -fuzztime 30s

clean:
	rm -rf bin $(DEMO)
