package bench

import (
	"context"
	"hash/fnv"
	"os"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/eval/ir"
	"github.com/shirube/shirube/internal/index"
)

// half splits by a stable hash: 0 or 1.
func half(s string) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % 2)
}

// split keeps the documents and queries of one half of a dataset: JSQuAD is
// split by article (title), so no article's paragraphs are on both sides;
// SciFact, whose abstracts are independent, by query.
func split(ds *beir.Dataset, byTitle bool, side int) *beir.Dataset {
	out := &beir.Dataset{Dir: ds.Dir, Qrels: ir.Qrels{}}
	docs := map[string]bool{}
	for _, d := range ds.Corpus {
		if !byTitle || half(d.Title) == side {
			out.Corpus = append(out.Corpus, d)
			docs[d.ID] = true
		}
	}
	for _, q := range ds.Queries {
		if !byTitle && half(q.ID) != side {
			continue
		}
		for id, g := range ds.Qrels[q.ID] {
			if g > 0 && docs[id] {
				out.Queries = append(out.Queries, q)
				out.Qrels[q.ID] = ds.Qrels[q.ID]
				break
			}
		}
	}
	return out
}

// TestDefaultWeightOnHalves checks the default (per-query) fusion weight on
// each half of JSQuAD (by article) and SciFact (by query): the gate's two
// constants were chosen on half 0 of each; half 1 is the check. On every
// half the default must not score below BM25 alone by more than 0.002
// nDCG@10. It indexes both corpora, so it runs only when asked:
//
//	SHIRUBE_BENCH_HALVES=1 go test ./internal/bench -run DefaultWeightOnHalves -v
func TestDefaultWeightOnHalves(t *testing.T) {
	if os.Getenv("SHIRUBE_BENCH_HALVES") == "" {
		t.Skip("set SHIRUBE_BENCH_HALVES=1 (indexes JSQuAD and SciFact)")
	}
	ctx := context.Background()
	for _, c := range []struct {
		dir     string
		byTitle bool
	}{{"jsquad-valid", true}, {"scifact", false}} {
		full, err := beir.Load("../../../shared/datasets/" + c.dir)
		if err != nil {
			t.Fatal(err)
		}
		for side := range 2 {
			ds := split(full, c.byTitle, side)
			ix, err := index.FromChunks(ctx, DocChunks(ds), index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
			if err != nil {
				t.Fatal(err)
			}
			score := func(opt BEIROptions) BEIRReport {
				opt.Fusion = "minmax"
				rep, err := EvaluateIndex(ctx, ds, ix, 0, opt)
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			bm25 := score(BEIROptions{Mode: "bm25"})
			auto := score(BEIROptions{Mode: "hybrid", BM25Weight: 0.6, AutoWeight: true})
			seed := score(BEIROptions{Mode: "hybrid", BM25Weight: 0.6})
			role := map[int]string{0: "tuned on", 1: "held out"}[side]
			t.Logf("%s half %d (%s): %d docs, %d queries: BM25 %.4f, default %.4f (BM25 alone for %.0f %%), fixed 0.6 %.4f",
				c.dir, side, role, len(ds.Corpus), bm25.Queries, bm25.NDCG10, auto.NDCG10, 100*auto.BM25OnlyShare, seed.NDCG10)
			if auto.NDCG10 < bm25.NDCG10-0.002 {
				t.Errorf("%s half %d: default %.4f is more than 0.002 below BM25 %.4f", c.dir, side, auto.NDCG10, bm25.NDCG10)
			}
		}
	}
}
