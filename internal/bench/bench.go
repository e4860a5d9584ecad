// Package bench measures shirube on real datasets: retrieval quality and
// speed on BEIR-layout corpora, metric correctness on published TREC runs,
// behaviour at scale, extractive-answer containment and the calibration of
// the insufficient-evidence refusal. `shirube bench` prints its reports.
package bench

import (
	"context"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bench/sysinfo"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/eval/ir"
	"github.com/shirube/shirube/internal/eval/stats"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

// Machine describes where a benchmark ran: the CPU as lscpu names it, the
// load average and memory at the time, Go and the platform.
type Machine = sysinfo.Machine

// ThisMachine describes the running machine (runs lscpu).
func ThisMachine() Machine { return sysinfo.Describe(context.Background()) }

// BEIRReport is the result of `shirube bench beir`.
type BEIRReport struct {
	Dataset    string  `json:"dataset"`
	Mode       string  `json:"mode"`
	Fusion     string  `json:"fusion"`
	BM25Weight float64 `json:"bm25_weight"`
	// AutoWeight: the default, per-query fusion weight (retrieve's gate)
	// instead of BM25Weight; BM25OnlyShare is the share of queries it
	// searched with BM25 alone.
	AutoWeight    bool    `json:"auto_weight"`
	BM25OnlyShare float64 `json:"bm25_only_share"`
	// Reranked: the learned re-ranker reordered each search's best
	// results (retrieve.Rerank), as the default search does.
	Reranked      bool    `json:"reranked"`
	Docs          int     `json:"docs"`
	Queries       int     `json:"queries"`
	NDCG10        float64 `json:"ndcg@10"`
	Recall10      float64 `json:"recall@10"`
	Recall100     float64 `json:"recall@100"`
	MRR10         float64 `json:"mrr@10"`
	ZeroHitRate   float64 `json:"zero_hit_rate"`
	IndexSeconds  float64 `json:"index_seconds"`
	DocsPerSecond float64 `json:"docs_per_second"`
	QueryP50Ms    float64 `json:"query_p50_ms"`
	QueryP95Ms    float64 `json:"query_p95_ms"`
	QueryP99Ms    float64 `json:"query_p99_ms"`
	Machine       Machine `json:"machine"`
}

// BEIROptions configure EvaluateIndex.
type BEIROptions struct {
	Dir        string
	Mode       string // bm25, vector or hybrid
	Fusion     string
	BM25Weight float64
	AutoWeight bool // let each search choose its weight (the default path)
	MaxQueries int  // 0 = all
	// Rerank, when set, reorders each search's best results (the default
	// search's re-rank stage).
	Rerank retrieve.Reranker
	// Synonyms, when set, expands each question's BM25 leg with the
	// synonyms of its words (the default search's expansion).
	Synonyms retrieve.Synonyms
}

// DocChunks turns a BEIR corpus into one chunk per document (title + text).
func DocChunks(ds *beir.Dataset) []chunk.Chunk {
	out := make([]chunk.Chunk, len(ds.Corpus))
	for i, d := range ds.Corpus {
		text := d.Text
		if d.Title != "" {
			text = d.Title + "\n" + d.Text
		}
		out[i] = chunk.Chunk{ID: d.ID, File: d.ID, Source: d.ID, Page: 1, Heading: d.Title, Text: text, Index: 0}
	}
	return out
}

// LoadIndexed loads a BEIR dataset and indexes it in memory with the
// default analyser and the local embedder.
func LoadIndexed(ctx context.Context, dir string) (*beir.Dataset, *index.Index, time.Duration, error) {
	return LoadIndexedWith(ctx, dir, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
}

// LoadIndexedWith loads a BEIR dataset and indexes it in memory with opt
// (for example the openai embedder with a remote client).
func LoadIndexedWith(ctx context.Context, dir string, opt index.MemoryOptions) (*beir.Dataset, *index.Index, time.Duration, error) {
	ds, err := loadDataset(dir)
	if err != nil {
		return nil, nil, 0, err
	}
	start := time.Now()
	ix, err := index.FromChunks(ctx, DocChunks(ds), opt)
	if err != nil {
		return nil, nil, 0, err
	}
	return ds, ix, time.Since(start), nil
}

// EvaluateIndex runs the queries of ds against an index built from it.
func EvaluateIndex(ctx context.Context, ds *beir.Dataset, ix retrieve.Store, took time.Duration, opt BEIROptions) (BEIRReport, error) {
	if opt.Mode == "" {
		opt.Mode = "hybrid"
	}
	s := retrieve.New(ix).WithSynonyms(opt.Synonyms)
	qs := ds.EvalQueries()
	if opt.MaxQueries > 0 && len(qs) > opt.MaxQueries {
		qs = qs[:opt.MaxQueries]
	}
	rankings := map[string][]string{}
	var lat stats.Latencies
	zero, bm25Only := 0, 0
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return BEIRReport{}, err
		}
		t0 := time.Now()
		res, info, err := s.Search(ctx, q.Text, retrieve.Options{K: 100, Candidates: 100, Mode: opt.Mode, Fusion: opt.Fusion, BM25Weight: opt.BM25Weight, AutoWeight: opt.AutoWeight, NoEvidence: true})
		if err == nil {
			res, err = s.Rerank(ctx, q.Text, res, opt.Rerank)
		}
		lat.Add(time.Since(t0))
		if err != nil {
			return BEIRReport{}, err
		}
		if info.ZeroHit {
			zero++
		}
		if info.BM25Weight == 1 {
			bm25Only++
		}
		ids := make([]string, len(res))
		for i, r := range res {
			ids[i] = r.ChunkID
		}
		rankings[q.ID] = ids
	}
	ev := ir.Evaluate(ds.Qrels, ir.RunFromRankings(rankings), 10, 100)
	sum := lat.Summary()
	rep := BEIRReport{
		Dataset:       opt.Dir,
		Mode:          opt.Mode,
		Fusion:        opt.Fusion,
		BM25Weight:    opt.BM25Weight,
		AutoWeight:    opt.AutoWeight,
		Reranked:      opt.Rerank != nil,
		BM25OnlyShare: round(float64(bm25Only) / float64(max(1, len(qs)))),
		Docs:          ix.Len(),
		Queries:       len(qs),
		NDCG10:        round(ev.NDCG10),
		Recall10:      round(ev.Recall10),
		Recall100:     round(ev.Recall100),
		MRR10:         round(ev.MRR10),
		ZeroHitRate:   round(float64(zero) / float64(max(1, len(qs)))),
		IndexSeconds:  round(took.Seconds()),
		DocsPerSecond: round(float64(ix.Len()) / took.Seconds()),
		QueryP50Ms:    ms(sum.P50),
		QueryP95Ms:    ms(sum.P95),
		QueryP99Ms:    ms(sum.P99),
		Machine:       ThisMachine(),
	}
	return rep, nil
}

// TRECReport is the result of `shirube bench trec`.
type TRECReport struct {
	Qrels   string  `json:"qrels"`
	Run     string  `json:"run"`
	Queries int     `json:"queries"`
	NDCG10  float64 `json:"ndcg@10"`
	MRR10   float64 `json:"mrr@10"`
}

// TREC evaluates a TREC run file (optionally .gz) against qrels.
func TREC(qrelsPath, runPath string) (TRECReport, error) {
	q, err := ir.OpenQrels(qrelsPath)
	if err != nil {
		return TRECReport{}, err
	}
	r, err := ir.OpenRun(runPath)
	if err != nil {
		return TRECReport{}, err
	}
	ev := ir.Evaluate(q, r, 10)
	return TRECReport{Qrels: qrelsPath, Run: runPath, Queries: ev.Queries, NDCG10: round(ev.NDCG10), MRR10: round(ev.MRR10)}, nil
}

func round(x float64) float64 { return float64(int64(x*1e4+0.5)) / 1e4 }

func ms(d time.Duration) float64 { return round(float64(d.Microseconds()) / 1000) }

func loadDataset(dir string) (*beir.Dataset, error) { return beir.Load(dir) }
