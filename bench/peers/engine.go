package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
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

// Engine is one system under comparison. Setup, if not nil, does the
// one-off work of a process that every later build reuses (shirube: loading
// the kagome dictionary); the harness times it once and reports it apart
// from the index time. Build indexes Input and returns a Searcher that keeps
// the index reachable, and a Close (or nil) that releases it.
type Engine struct {
	Name string
	// Kind is "lexical" or "vector".
	Kind string
	// Baseline names the peer this engine is compared with; the report
	// adds a ratio row for it. Empty for the peers themselves.
	Baseline string
	Setup    func(ctx context.Context) error
	// SetupNote says what Setup does, for the report.
	SetupNote string
	Build     func(ctx context.Context, in *Input) (Searcher, func() error, error)
}

// Spread is the median of a figure over the runs and its range.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// spreadOf summarises per-run values.
func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1]}
}

// Report is one engine's measurements over all runs. Time figures are in
// milliseconds: the median over the runs with its min and max.
type Report struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// SetupMs is the one-off Setup of the first run (0: none), SetupNote
	// what it was; IndexMs leaves it out.
	SetupMs   float64 `json:"setup_ms,omitempty"`
	SetupNote string  `json:"setup,omitempty"`
	IndexMs   Spread  `json:"index_ms"`
	// HeapMiB is the heap the built index retains beyond Input (the shared
	// precomputed vectors were allocated before and are not counted).
	HeapMiB Spread `json:"heap_mib"`
	P50Ms   Spread `json:"query_p50_ms"`
	P95Ms   Spread `json:"query_p95_ms"`
	P99Ms   Spread `json:"query_p99_ms"`
	// Runs holds each run's latency summary.
	Runs      []stats.Summary `json:"runs"`
	NDCG10    float64         `json:"ndcg@10"`
	MRR10     float64         `json:"mrr@10"`
	Recall10  float64         `json:"recall@10"`
	Recall100 float64         `json:"recall@100"`
	Error     string          `json:"error,omitempty"`
}

// warmup is how many queries run untimed per engine before each run's
// timing, so lazily built structures and caches do not land in the first
// samples.
const warmup = 20

// runOne is one engine's figures in one run.
type runOne struct {
	indexMs, heapMiB float64
	lat              stats.Latencies
	rankings         ir.Run
}

// measureAll runs the engines `runs` times. In each run every engine is
// built (in an order rotated by the run), warmed up, and then the queries
// are answered query by query with the engines interleaved — the order of
// the engines rotating with the query — so that a change of machine load
// during the run hits every engine alike. Rankings are scored from the
// first run. An engine that fails is reported with its error and left out
// of later runs.
func measureAll(ctx context.Context, engines []Engine, in *Input, runs int, progress func(string)) ([]Report, error) {
	reps := make([]Report, len(engines))
	per := make([][]*runOne, len(engines))
	for i, e := range engines {
		reps[i] = Report{Name: e.Name, Kind: e.Kind, SetupNote: e.SetupNote}
		if e.Setup != nil {
			start := time.Now()
			if err := e.Setup(ctx); err != nil {
				reps[i].Error = fmt.Sprintf("%s: setup: %v", e.Name, err)
				continue
			}
			reps[i].SetupMs = stats.Ms(time.Since(start))
		}
	}
	for r := range runs {
		progress(fmt.Sprintf("run %d/%d", r+1, runs))
		searchers := make([]Searcher, len(engines))
		closers := make([]func() error, len(engines))
		cur := make([]*runOne, len(engines))
		for k := range engines {
			i := (k + r) % len(engines)
			e := engines[i]
			if reps[i].Error != "" {
				continue
			}
			before := stats.SettledMem()
			start := time.Now()
			search, closeFn, err := e.Build(ctx, in)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				reps[i].Error = fmt.Sprintf("%s: build: %v", e.Name, err)
				continue
			}
			o := &runOne{indexMs: stats.Ms(time.Since(start)), rankings: make(ir.Run, len(in.Queries))}
			o.heapMiB = stats.MiB(stats.HeapGrowth(before, stats.SettledMem()))
			searchers[i], closers[i], cur[i] = search, closeFn, o
			for q := range min(warmup, len(in.Queries)) {
				if _, err := search(ctx, q); err != nil {
					reps[i].Error = fmt.Sprintf("%s: warm-up query %s: %v", e.Name, in.Queries[q].ID, err)
					searchers[i] = nil
					break
				}
			}
		}
		for q, query := range in.Queries {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for k := range engines {
				i := (k + q + r) % len(engines)
				search := searchers[i]
				if search == nil {
					continue
				}
				t := time.Now()
				hits, err := search(ctx, q)
				cur[i].lat.Add(time.Since(t))
				if err != nil {
					reps[i].Error = fmt.Sprintf("%s: query %s: %v", engines[i].Name, query.ID, err)
					searchers[i] = nil
					continue
				}
				scores := make(map[string]float64, len(hits))
				for _, h := range hits {
					if _, dup := scores[h.ID]; !dup {
						scores[h.ID] = h.Score
					}
				}
				cur[i].rankings[query.ID] = scores
			}
		}
		for i := range engines {
			if closers[i] != nil {
				closers[i]()
			}
			if cur[i] != nil && reps[i].Error == "" {
				per[i] = append(per[i], cur[i])
			}
		}
		runtime.KeepAlive(searchers)
	}
	for i, runsOf := range per {
		if reps[i].Error != "" || len(runsOf) == 0 {
			continue
		}
		var idx, heap, p50, p95, p99 []float64
		for _, o := range runsOf {
			s := o.lat.Summary()
			reps[i].Runs = append(reps[i].Runs, s)
			idx, heap = append(idx, o.indexMs), append(heap, o.heapMiB)
			p50, p95, p99 = append(p50, stats.Ms(s.P50)), append(p95, stats.Ms(s.P95)), append(p99, stats.Ms(s.P99))
		}
		reps[i].IndexMs, reps[i].HeapMiB = spreadOf(idx), spreadOf(heap)
		reps[i].P50Ms, reps[i].P95Ms, reps[i].P99Ms = spreadOf(p50), spreadOf(p95), spreadOf(p99)
		res := ir.Evaluate(in.Data.Qrels, runsOf[0].rankings)
		reps[i].NDCG10, reps[i].MRR10, reps[i].Recall10, reps[i].Recall100 = res.NDCG10, res.MRR10, res.Recall10, res.Recall100
	}
	return reps, nil
}

// Ratio compares an engine with its baseline run by run: time ratios below
// 1 mean the engine is faster (median over the runs and range);
// NDCGDelta above 0 means it ranks better.
type Ratio struct {
	Engine    string  `json:"engine"`
	Baseline  string  `json:"baseline"`
	Index     Spread  `json:"index_time_ratio"`
	P50       Spread  `json:"p50_ratio"`
	P95       Spread  `json:"p95_ratio"`
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
		if e.Baseline == "" || !ok1 || !ok2 || len(r.Runs) != len(b.Runs) {
			continue
		}
		// Latency ratios pair the runs (run k of each, interleaved); the
		// index ratio is the ratio of the medians, its range the extremes.
		var p50, p95 []float64
		for k := range r.Runs {
			p50 = append(p50, div(float64(r.Runs[k].P50), float64(b.Runs[k].P50)))
			p95 = append(p95, div(float64(r.Runs[k].P95), float64(b.Runs[k].P95)))
		}
		out = append(out, Ratio{
			Engine:    e.Name,
			Baseline:  e.Baseline,
			Index:     Spread{Median: div(r.IndexMs.Median, b.IndexMs.Median), Min: div(r.IndexMs.Min, b.IndexMs.Max), Max: div(r.IndexMs.Max, b.IndexMs.Min)},
			P50:       spreadOf(p50),
			P95:       spreadOf(p95),
			NDCGDelta: r.NDCG10 - b.NDCG10,
		})
	}
	return out
}
