package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/eval/stats"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/pgstore"
	"github.com/shirube/shirube/internal/retrieve"
)

// StoreLatency is one store's query latency for one leg.
type StoreLatency struct {
	Store string  `json:"store"` // embedded, postgres-hnsw, postgres-exact, postgres-sql-bm25 (first 200 queries)
	Mode  string  `json:"mode"`  // bm25, vector, hybrid
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
}

// StoreReport is the result of `shirube bench store`: the same corpus in
// the embedded index and in PostgreSQL, the same queries timed on each.
type StoreReport struct {
	Dataset         string         `json:"dataset"`
	Chunks          int            `json:"chunks"`
	Queries         int            `json:"queries"`
	EmbeddedSeconds float64        `json:"embedded_build_seconds"`
	StoreSeconds    float64        `json:"store_load_seconds"` // analysis, COPY, embedding, statistics, HNSW
	VectorSearch    string         `json:"vector_search"`
	SameTop4BM25    float64        `json:"same_top4_bm25"` // share of queries whose BM25 top 4 chunk texts agree
	Latency         []StoreLatency `json:"latency"`
	DatabaseSizeMiB float64        `json:"database_size_mib"`
	PostingsRows    int64          `json:"postings_rows"`
	Machine         Machine        `json:"machine"`
}

// replicate repeats a corpus's chunks up to n, renaming the copies.
func replicate(base []chunk.Chunk, n int) []chunk.Chunk {
	chunks := make([]chunk.Chunk, 0, n)
	for i := 0; len(chunks) < n; i++ {
		c := base[i%len(base)]
		c.ID = fmt.Sprintf("%s#%d", c.ID, i/len(base))
		chunks = append(chunks, c)
	}
	return chunks
}

// Store replicates a BEIR corpus to n chunks, indexes it in memory and in
// the PostgreSQL store db, and times maxQueries queries (k = 4, w = 0.6)
// per leg on the embedded index, on PostgreSQL with pgvector's HNSW index
// and with its exact scan.
func Store(ctx context.Context, dir string, n, maxQueries int, db *pgstore.DB) (StoreReport, error) {
	ds, err := beir.Load(dir)
	if err != nil {
		return StoreReport{}, err
	}
	base := DocChunks(ds)
	if len(base) == 0 {
		return StoreReport{}, fmt.Errorf("%s has no documents", dir)
	}
	chunks := replicate(base, n)
	rep := StoreReport{Dataset: dir, Chunks: n, Machine: ThisMachine()}
	opt := index.MemoryOptions{Analyzer: analysis.DefaultOptions()}
	t0 := time.Now()
	ix, err := index.FromChunks(ctx, chunks, opt)
	if err != nil {
		return rep, err
	}
	rep.EmbeddedSeconds = round(time.Since(t0).Seconds())
	t0 = time.Now()
	if _, err := db.LoadChunks(ctx, chunks, opt, pgstore.FinishOptions{}); err != nil {
		return rep, err
	}
	rep.StoreSeconds = round(time.Since(t0).Seconds())
	hnsw, err := db.Open(ctx, pgstore.OpenOptions{Analyzer: ix.Analyzer()})
	if err != nil {
		return rep, err
	}
	exact, err := db.Open(ctx, pgstore.OpenOptions{Analyzer: ix.Analyzer(), Exact: true})
	if err != nil {
		return rep, err
	}
	sqlBM25, err := db.Open(ctx, pgstore.OpenOptions{Analyzer: ix.Analyzer(), SQLBM25: true})
	if err != nil {
		return rep, err
	}
	rep.VectorSearch = hnsw.VectorSearch()
	_ = db.Pool().QueryRow(ctx, "SELECT pg_database_size(current_database()) / 1048576.0").Scan(&rep.DatabaseSizeMiB)
	rep.DatabaseSizeMiB = round(rep.DatabaseSizeMiB)
	_ = db.Pool().QueryRow(ctx, "SELECT count(*) FROM postings").Scan(&rep.PostingsRows)

	qs := ds.EvalQueries()
	if maxQueries > 0 && len(qs) > maxQueries {
		qs = qs[:maxQueries]
	}
	rep.Queries = len(qs)
	stores := []struct {
		name string
		s    *retrieve.Searcher
	}{{"embedded", retrieve.New(ix)}, {"postgres-hnsw", retrieve.New(hnsw)}, {"postgres-exact", retrieve.New(exact)}, {"postgres-sql-bm25", retrieve.New(sqlBM25)}}
	same := 0
	for _, mode := range []string{"bm25", "vector", "hybrid"} {
		for _, st := range stores {
			if st.name == "postgres-exact" && mode == "bm25" || st.name == "postgres-sql-bm25" && mode != "bm25" {
				continue // the BM25 leg does not depend on the vector index
			}
			qs := qs
			if st.name == "postgres-sql-bm25" {
				qs = qs[:min(len(qs), 200)] // slow: reads every posting of every term
			}
			var lat stats.Latencies
			for i, q := range qs {
				o := retrieve.Options{K: 4, BM25Weight: 0.6, Mode: mode}
				t := time.Now()
				res, _, err := st.s.Search(ctx, q.Text, o)
				if err != nil {
					return rep, fmt.Errorf("%s %s: %w", st.name, mode, err)
				}
				lat.Add(time.Since(t))
				if mode == "bm25" && st.name == "postgres-hnsw" {
					want, _, _ := stores[0].s.Search(ctx, qs[i].Text, o)
					if sameTexts(res, want) {
						same++
					}
				}
			}
			sum := lat.Summary()
			rep.Latency = append(rep.Latency, StoreLatency{Store: st.name, Mode: mode, P50Ms: ms(sum.P50), P95Ms: ms(sum.P95)})
		}
	}
	rep.SameTop4BM25 = round(float64(same) / float64(max(1, len(qs))))
	return rep, nil
}

// sameTexts reports whether two result lists hold the same texts with the
// same scores in order (replicated chunks tie; their ids may differ).
func sameTexts(a, b []retrieve.Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Text != b[i].Text || a[i].Score != b[i].Score {
			return false
		}
	}
	return true
}
