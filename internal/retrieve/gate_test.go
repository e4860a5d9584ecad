package retrieve

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
)

// hashEmbedder is a neural embedder stand-in: it maps each text to a
// deterministic vector, so an index can be built with the openai embedder
// kind without a server (the HTTP client is tested in internal/embed).
type hashEmbedder struct{}

func (hashEmbedder) EmbedTexts(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 8)
		for j := range v {
			h := fnv.New32a()
			fmt.Fprintf(h, "%d:%s", j, s)
			v[j] = float32(h.Sum32()%1000) / 1000
		}
		out[i] = v
	}
	return out, nil
}

func TestAutoWeightGate(t *testing.T) {
	local := New(testIndex(t))
	ctx := context.Background()
	tests := []struct {
		name    string
		s       *Searcher
		query   string
		opt     Options
		want    float64
		auto    bool
		covered bool // BM25's best passage holds the query's words
	}{
		// Every word of the question is in the top passage: BM25 alone.
		{"covered", local, "マルウェアに感染した端末の隔離", Options{K: 3, BM25Weight: 0.6, AutoWeight: true}, 1, true, true},
		{"covered english", local, "restore point", Options{K: 3, BM25Weight: 0.6, AutoWeight: true}, 1, true, true},
		// Most of the question's words are nowhere in the top passage:
		// the vector leg is let in at the gate's hybrid weight.
		{"uncovered", local, "マルウェア 駆除 ソフトウェア 更新 署名 配布", Options{K: 3, BM25Weight: 0.6, AutoWeight: true}, GateHybridWeight, true, false},
		// A weight the user set is used as given.
		{"explicit", local, "マルウェアに感染した端末の隔離", Options{K: 3, BM25Weight: 0.6}, 0.6, false, true},
		{"explicit bm25 mode", local, "マルウェアに感染した端末の隔離", Options{K: 3, BM25Weight: 0.6, AutoWeight: true, Mode: "bm25"}, 1, false, true},
		// A neural embedder keeps the seed's fixed weight.
		{"openai", New(neuralIndex(t)), "マルウェアに感染した端末の隔離", Options{K: 3, BM25Weight: 0.6, AutoWeight: true}, 0.6, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, info, err := tt.s.Search(ctx, tt.query, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if info.BM25Weight != tt.want || info.AutoWeight != tt.auto {
				t.Errorf("weight %v (auto %v), want %v (auto %v); top coverage %.2f", info.BM25Weight, info.AutoWeight, tt.want, tt.auto, info.TopCoverage)
			}
			if len(res) == 0 {
				t.Fatal("no results")
			}
			if tt.auto && tt.s == local && (info.TopCoverage >= GateCoverage) != tt.covered {
				t.Errorf("top coverage %.2f, covered = %v", info.TopCoverage, tt.covered)
			}
			// The fused score follows the weight used.
			for _, r := range res {
				want := round4(r.BM25Score*info.BM25Weight + r.VectorScore*(1-info.BM25Weight))
				if math.Abs(r.Score-want) > 2e-4 {
					t.Errorf("%s: score %v, want %v at w = %v", r.ChunkID, r.Score, want, info.BM25Weight)
				}
			}
		})
	}
}

// The gate changes the ranking's weight, not the evidence score: a chunk
// scores the same evidence whether the weight was chosen or set to the
// configured 0.6, so the refusal threshold keeps its calibration.
func TestAutoWeightKeepsEvidence(t *testing.T) {
	s := New(testIndex(t))
	ctx := context.Background()
	for _, q := range []string{"マルウェアに感染した端末の隔離", "ログの保管期間は？", "マルウェア 駆除 ソフトウェア 更新 署名 配布"} {
		auto, _, err := s.Search(ctx, q, Options{K: 6, BM25Weight: 0.6, AutoWeight: true})
		if err != nil {
			t.Fatal(err)
		}
		fixed, _, err := s.Search(ctx, q, Options{K: 6, BM25Weight: 0.6})
		if err != nil {
			t.Fatal(err)
		}
		ev := map[string]float64{}
		for _, r := range fixed {
			ev[r.ChunkID] = r.EvidenceScore
		}
		for _, r := range auto {
			if e, ok := ev[r.ChunkID]; ok && e != r.EvidenceScore {
				t.Errorf("%q %s: evidence %v with the chosen weight, %v at 0.6", q, r.ChunkID, r.EvidenceScore, e)
			}
		}
	}
}

func neuralIndex(t *testing.T) *index.Index {
	t.Helper()
	var cs []chunk.Chunk
	for i, s := range []string{
		"マルウェアに感染した端末はネットワークから隔離する。",
		"ログの保管期間は1年とする。",
		"バックアップからの復旧手順。",
	} {
		cs = append(cs, chunk.Chunk{ID: fmt.Sprintf("n%d_0", i), File: fmt.Sprintf("database/n%d/page_001.md", i), Page: 1, Text: s})
	}
	ix, err := index.FromChunks(context.Background(), cs, index.MemoryOptions{Analyzer: analysis.DefaultOptions(), Embedder: "openai", EmbeddingModel: "test", Remote: hashEmbedder{}})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// The gate is a rule of the search, not a value stored in the index: a
// saved and reloaded index (and a generation written before the gate
// existed, which has the same files) chooses the same weights.
func TestAutoWeightAfterSaveAndLoad(t *testing.T) {
	ctx := context.Background()
	mem := testIndex(t)
	dir := t.TempDir()
	if err := mem.Save(ctx, dir); err != nil {
		t.Fatal(err)
	}
	disk, err := index.Open(ctx, dir, index.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"マルウェアに感染した端末の隔離", "マルウェア 駆除 ソフトウェア 更新 署名 配布", "restore point"} {
		opt := Options{K: 3, BM25Weight: 0.6, AutoWeight: true}
		a, ia, err := New(mem).Search(ctx, q, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, ib, err := New(disk).Search(ctx, q, opt)
		if err != nil {
			t.Fatal(err)
		}
		if ia.BM25Weight != ib.BM25Weight || len(a) != len(b) || a[0].ChunkID != b[0].ChunkID {
			t.Errorf("%q: weight %v / top %s in memory, %v / %s after load", q, ia.BM25Weight, a[0].ChunkID, ib.BM25Weight, b[0].ChunkID)
		}
	}
}
