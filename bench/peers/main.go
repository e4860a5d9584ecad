// Command peers measures shirube's peers on a BEIR-layout dataset: a bleve
// in-memory BM25 index and a chromem-go vector collection, both fed the same
// corpus and queries as shirube's BM25 and vector engines, reporting index
// time, retained heap, query latency (nearest-rank p50/p95/p99) and nDCG@10,
// MRR@10, Recall@10/100 as JSON on stdout.
//
// The engines are measured together, --runs times (default 3): each run
// builds every engine, then answers the queries one at a time with the
// engines interleaved query by query (the order rotating), so load from
// elsewhere on the machine hits all engines alike. Time figures are the
// median over the runs with min and max; one-off process setup (shirube's
// kagome dictionary load) is reported apart from the index time. The
// machine line comes from lscpu.
//
//	go run . --dir ../../../shared/datasets/jsquad-valid
//	go run . --dir ../../../shared/datasets/scifact --runs 5 --out scifact.json
//
// The vector peer gets precomputed hashed character-n-gram vectors (see
// hashEmbed), so its figures measure vector search speed, not embedding
// quality. shirube's own engines plug in through shirubeEngines (shirube.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/bench/sysinfo"
	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/eval/stats"
)

// Result is the JSON document the command prints.
type Result struct {
	Dataset   string    `json:"dataset"`
	Docs      int       `json:"docs"`
	Queries   int       `json:"queries"`
	Lang      string    `json:"lang"`
	K         int       `json:"k"`
	Runs      int       `json:"runs"`
	Embedding Embedding `json:"embedding"`
	Engines   []Report  `json:"engines"`
	Ratios    []Ratio   `json:"ratios,omitempty"`
	// Machine is lscpu's model and CPU count, memory and the load average
	// at the end of the measurement.
	Machine sysinfo.Machine `json:"machine"`
	// MachineLine is Machine in the form docs/BENCHMARKS.md quotes.
	MachineLine string `json:"machine_line"`
}

// Embedding describes the shared benchmark vectors.
type Embedding struct {
	Kind string  `json:"kind"`
	Dims int     `json:"dims"`
	Ms   float64 `json:"embed_ms"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "BEIR dataset directory (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	lang := fs.String("lang", "auto", `corpus language: "ja", "en" or "auto" (detect from the corpus)`)
	k := fs.Int("k", 100, "hits per query (Recall@100 needs 100)")
	maxQ := fs.Int("max-queries", 0, "answer only the first N judged queries (0 = all)")
	only := fs.String("engines", "", "comma-separated engine names to run (default: all)")
	out := fs.String("out", "", "also write the JSON report to this file")
	runs := fs.Int("runs", 3, "measurement runs (each builds every engine and times every query, engines interleaved); medians and ranges are reported")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--dir is required, e.g. --dir ../../../shared/datasets/jsquad-valid")
	}
	if *runs < 1 {
		return fmt.Errorf("--runs must be at least 1, got %d", *runs)
	}
	if *k <= 0 {
		return fmt.Errorf("--k must be positive, got %d", *k)
	}

	data, err := beir.LoadSplit(ctx, *dir, "test")
	if err != nil {
		return err
	}
	if len(data.Corpus) == 0 {
		return fmt.Errorf("%s: corpus.jsonl has no documents", *dir)
	}
	in := &Input{Data: data, Queries: data.EvalQueries(), K: *k, Dims: embedDims}
	if *maxQ > 0 && *maxQ < len(in.Queries) {
		in.Queries = in.Queries[:*maxQ]
	}
	switch *lang {
	case "ja", "en":
		in.Lang = *lang
	case "auto":
		var sample strings.Builder
		for i := 0; i < len(data.Corpus) && sample.Len() < 64<<10; i++ {
			sample.WriteString(in.DocText(i))
		}
		in.Lang = detectLang(sample.String())
	default:
		return fmt.Errorf(`--lang must be "ja", "en" or "auto", got %q`, *lang)
	}

	start := time.Now()
	in.DocVecs = make([][]float32, len(data.Corpus))
	for i := range data.Corpus {
		in.DocVecs[i] = hashEmbed(in.DocText(i), embedDims)
	}
	in.QueryVecs = make([][]float32, len(in.Queries))
	for i, q := range in.Queries {
		in.QueryVecs[i] = hashEmbed(q.Text, embedDims)
	}
	res := Result{
		Dataset:   filepath.Base(filepath.Clean(*dir)),
		Docs:      len(data.Corpus),
		Queries:   len(in.Queries),
		Lang:      in.Lang,
		K:         *k,
		Runs:      *runs,
		Embedding: Embedding{Kind: "hashed char 2+3-grams, signed, L2-normalised", Dims: embedDims, Ms: stats.Ms(time.Since(start))},
	}

	engines, err := selectEngines(append([]Engine{bleveEngine(), chromemEngine()}, shirubeEngines()...), *only)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "peers: %d engines on %s (%d docs, %d queries), %d runs…\n", len(engines), res.Dataset, res.Docs, res.Queries, *runs)
	res.Engines, err = measureAll(ctx, engines, in, *runs, func(s string) { fmt.Fprintln(stderr, "peers:", s) })
	if err != nil {
		return err
	}
	for _, r := range res.Engines {
		if r.Error != "" {
			fmt.Fprintln(stderr, "peers:", r.Error)
		}
	}
	res.Ratios = ratios(engines, res.Engines)
	res.Machine = sysinfo.Describe(ctx)
	res.MachineLine = res.Machine.Line()

	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	b = append(b, '\n')
	if _, err := stdout.Write(b); err != nil {
		return err
	}
	if *out != "" {
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return nil
}

// selectEngines keeps the engines named in the comma-separated list, or all
// of them when it is empty.
func selectEngines(all []Engine, list string) ([]Engine, error) {
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	byName := map[string]Engine{}
	var names []string
	for _, e := range all {
		byName[e.Name] = e
		names = append(names, e.Name)
	}
	var out []Engine
	for _, n := range strings.Split(list, ",") {
		e, ok := byName[strings.TrimSpace(n)]
		if !ok {
			return nil, fmt.Errorf("--engines: unknown engine %q (have %s)", n, strings.Join(names, ", "))
		}
		out = append(out, e)
	}
	return out, nil
}
