package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/eval/ir"
	"github.com/shirube/shirube/internal/eval/stats"
)

// Input is everything an engine may use: the dataset, the queries to answer
// (those judged in the qrels), the corpus language, and precomputed
// embeddings so that every vector engine searches identical vectors.
type Input struct {
	Data    *beir.Dataset
	Queries []beir.Query
	// Lang is "ja" or "en"; lexical engines pick their analyzer from it.
	Lang string
	// DocVecs[i] embeds Data.Corpus[i]; QueryVecs[i] embeds Queries[i].
	// Both are L2-normalised, Dims long.
	DocVecs, QueryVecs [][]float32
	Dims               int
	// K is how many hits each query must return (100, for Recall@100).
	K int
}

// DocText is the text lexical engines index for corpus document i: title
// and body joined, as BEIR's "flat" BM25 baselines do.
func (in *Input) DocText(i int) string {
	d := in.Data.Corpus[i]
	if d.Title == "" {
		return d.Text
	}
	return d.Title + "\n" + d.Text
}

// Hit is one retrieved document.
type Hit struct {
	ID    string
	Score float64
}

// Searcher answers query number i of Input.Queries with at most Input.K hits.
// It must be safe to call repeatedly; the harness calls it sequentially.
type Searcher func(ctx context.Context, i int) ([]Hit, error)

// Engine is one system under comparison. Build indexes Input and returns a
// Searcher that keeps the index reachable; the harness times Build, measures
// the heap it retains, then times every query and scores the rankings.
// Close, if not nil, releases the index after the measurements.
type Engine struct {
	Name string
	// Kind is "lexical" or "vector".
	Kind string
	// Baseline names the peer this engine is compared with; the report
	// adds a ratio row for it. Empty for the peers themselves.
	Baseline string
	Build    func(ctx context.Context, in *Input) (Searcher, func() error, error)
}

// Report is one engine's measurements.
type Report struct {
	Name    string  `json:"name"`
	Kind    string  `json:"kind"`
	IndexMs float64 `json:"index_ms"`
	// HeapMiB is the heap the built index retains beyond Input (the shared
	// precomputed vectors were allocated before and are not counted).
	HeapMiB   float64       `json:"heap_mib"`
	Query     stats.Summary `json:"query"`
	NDCG10    float64       `json:"ndcg@10"`
	MRR10     float64       `json:"mrr@10"`
	Recall10  float64       `json:"recall@10"`
	Recall100 float64       `json:"recall@100"`
	Error     string        `json:"error,omitempty"`
}

// warmup is how many queries run untimed before measuring, so lazily built
// structures and caches do not land in the first samples.
const warmup = 20

// measure builds e on in, runs every query and scores the result.
func measure(ctx context.Context, e Engine, in *Input) (Report, error) {
	rep := Report{Name: e.Name, Kind: e.Kind}
	before := stats.SettledMem()
	start := time.Now()
	search, closeFn, err := e.Build(ctx, in)
	if err != nil {
		return rep, fmt.Errorf("%s: build: %w", e.Name, err)
	}
	rep.IndexMs = stats.Ms(time.Since(start))
	after := stats.SettledMem()
	rep.HeapMiB = stats.MiB(stats.HeapGrowth(before, after))
	if closeFn != nil {
		defer closeFn()
	}

	for i := range min(warmup, len(in.Queries)) {
		if _, err := search(ctx, i); err != nil {
			return rep, fmt.Errorf("%s: warm-up query %s: %w", e.Name, in.Queries[i].ID, err)
		}
	}
	var lat stats.Latencies
	rankings := make(ir.Run, len(in.Queries))
	for i, q := range in.Queries {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		t := time.Now()
		hits, err := search(ctx, i)
		lat.Add(time.Since(t))
		if err != nil {
			return rep, fmt.Errorf("%s: query %s: %w", e.Name, q.ID, err)
		}
		scores := make(map[string]float64, len(hits))
		for _, h := range hits {
			if _, dup := scores[h.ID]; !dup {
				scores[h.ID] = h.Score
			}
		}
		rankings[q.ID] = scores
	}
	runtime.KeepAlive(search)
	rep.Query = lat.Summary()
	res := ir.Evaluate(in.Data.Qrels, rankings)
	rep.NDCG10, rep.MRR10, rep.Recall10, rep.Recall100 = res.NDCG10, res.MRR10, res.Recall10, res.Recall100
	return rep, nil
}

// Ratio compares an engine with its baseline: time ratios below 1 mean the
// engine is faster; NDCGDelta above 0 means it ranks better.
type Ratio struct {
	Engine    string  `json:"engine"`
	Baseline  string  `json:"baseline"`
	Index     float64 `json:"index_time_ratio"`
	P50       float64 `json:"p50_ratio"`
	P95       float64 `json:"p95_ratio"`
	NDCGDelta float64 `json:"ndcg@10_delta"`
}

func ratios(engines []Engine, reports []Report) []Ratio {
	byName := map[string]Report{}
	for _, r := range reports {
		if r.Error == "" {
			byName[r.Name] = r
		}
	}
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	var out []Ratio
	for _, e := range engines {
		r, ok1 := byName[e.Name]
		b, ok2 := byName[e.Baseline]
		if e.Baseline == "" || !ok1 || !ok2 {
			continue
		}
		out = append(out, Ratio{
			Engine:    e.Name,
			Baseline:  e.Baseline,
			Index:     div(r.IndexMs, b.IndexMs),
			P50:       div(float64(r.Query.P50), float64(b.Query.P50)),
			P95:       div(float64(r.Query.P95), float64(b.Query.P95)),
			NDCGDelta: r.NDCG10 - b.NDCG10,
		})
	}
	return out
}
