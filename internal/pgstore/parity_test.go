package pgstore_test

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/pgstore"
	"github.com/shirube/shirube/internal/pgtest"
	"github.com/shirube/shirube/internal/retrieve"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const jsquad = "../../../shared/datasets/jsquad-valid"

// parityQueries is how many JSQuAD questions the parity test checks (the
// first ones of the 4,442; the full set is compared by
// `shirube bench beir --store`, docs/BENCHMARKS.md).
const parityQueries = 1000

// connect opens a fresh database.
func connect(t *testing.T, opt pgstore.Options) *pgstore.DB {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	db, err := pgstore.Connect(context.Background(), dsn, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// loadJSQuAD indexes the JSQuAD corpus in memory and in the database.
func loadJSQuAD(t *testing.T, db *pgstore.DB) (*beir.Dataset, *index.Index, *pgstore.Index) {
	t.Helper()
	ctx := context.Background()
	if _, err := os.Stat(jsquad); err != nil {
		t.Fatalf("JSQuAD corpus missing: %v", err)
	}
	ds, ix, _, err := bench.LoadIndexed(ctx, jsquad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.LoadChunks(ctx, bench.DocChunks(ds), index.MemoryOptions{Analyzer: analysis.DefaultOptions()}, pgstore.FinishOptions{}); err != nil {
		t.Fatal(err)
	}
	pix, err := db.Open(ctx, pgstore.OpenOptions{Analyzer: ix.Analyzer()})
	if err != nil {
		t.Fatal(err)
	}
	return ds, ix, pix
}

// TestBM25Parity checks that BM25 — summed in SQL from the postings table,
// and scored here from the encoded postings — gives the embedded index's
// top 10, in the same order, with scores equal to 1e-6 (in SQL) and to the
// bit (in Go), and the same upper bound, on the first 1,000 JSQuAD
// questions.
func TestBM25Parity(t *testing.T) {
	db := connect(t, pgstore.Options{})
	ctx := context.Background()
	ds, ix, goIx := loadJSQuAD(t, db)
	sqlIx, err := db.Open(ctx, pgstore.OpenOptions{Analyzer: ix.Analyzer(), SQLBM25: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pix  *pgstore.Index
		tol  float64
	}{{"sql", sqlIx, 1e-6}, {"go", goIx, 0}} {
		t.Run(tc.name, func(t *testing.T) { bm25Parity(t, ds, ix, tc.pix, tc.tol) })
	}
}

func bm25Parity(t *testing.T, ds *beir.Dataset, ix *index.Index, pix *pgstore.Index, tol float64) {
	ctx := context.Background()
	if pix.Len() != ix.Len() {
		t.Fatalf("store has %d chunks, embedded %d", pix.Len(), ix.Len())
	}
	qs := ds.EvalQueries()[:parityQueries]
	for _, q := range qs {
		terms := ix.Terms(q.Text)
		want, wub := ix.Lexical(terms, 10)
		got, gub, err := pix.LexicalHits(ctx, terms, 10)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(gub-wub) > 1e-9 {
			t.Errorf("%s: upper bound %v, embedded %v", q.ID, gub, wub)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d hits, embedded %d", q.ID, len(got), len(want))
		}
		ids := make([]int, len(got))
		for i, h := range got {
			ids[i] = h.Chunk
		}
		chs, err := pix.Chunks(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if chs[i].ID != ix.Chunk(want[i].Chunk).ID || math.Abs(got[i].Score-want[i].Score) > tol {
				t.Errorf("%s rank %d: store %s %.9f, embedded %s %.9f", q.ID, i+1, chs[i].ID, got[i].Score, ix.Chunk(want[i].Chunk).ID, want[i].Score)
			}
		}
		idf, err := pix.IDFs(ctx, terms)
		if err != nil {
			t.Fatal(err)
		}
		for _, term := range terms {
			if math.Abs(idf[term]-ix.IDF(term)) > 1e-12 {
				t.Errorf("%s: idf(%q) = %v, embedded %v", q.ID, term, idf[term], ix.IDF(term))
			}
		}
	}
}

// TestSearchParity runs whole hybrid searches (fusion, evidence scores)
// over both stores, with pgvector's exact scan, and compares the results.
func TestSearchParity(t *testing.T) {
	db := connect(t, pgstore.Options{})
	if !db.HasVector() {
		t.Log("pgvector not installed: vectors are searched in memory")
	}
	ctx := context.Background()
	ds, ix, _ := loadJSQuAD(t, db)
	pix, err := db.Open(ctx, pgstore.OpenOptions{Analyzer: ix.Analyzer(), Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	es, ps := retrieve.New(ix), retrieve.New(pix)
	differ := 0
	qs := ds.EvalQueries()[:300]
	for _, q := range qs {
		opt := retrieve.Options{K: 10, BM25Weight: 0.6}
		want, _, err := es.Search(ctx, q.Text, opt)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := ps.Search(ctx, q.Text, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d results, embedded %d", q.ID, len(got), len(want))
		}
		for i := range want {
			if got[i].ChunkID != want[i].ChunkID || math.Abs(got[i].Score-want[i].Score) > 1e-4 || math.Abs(got[i].EvidenceScore-want[i].EvidenceScore) > 1e-4 {
				differ++
				t.Logf("%s rank %d: store %s %.4f/%.4f, embedded %s %.4f/%.4f", q.ID, i+1, got[i].ChunkID, got[i].Score, got[i].EvidenceScore, want[i].ChunkID, want[i].Score, want[i].EvidenceScore)
				break
			}
		}
	}
	// pgvector accumulates cosines in float32, the embedded store in
	// float64: a near-tie in the vector leg may swap. Nothing else may.
	if differ > len(qs)/100 {
		t.Errorf("%d of %d hybrid searches differ", differ, len(qs))
	}
}
