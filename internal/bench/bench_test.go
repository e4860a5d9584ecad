package bench

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

const jsquad = "../../../shared/datasets/jsquad-valid"

// BenchmarkIndexJSQuAD measures in-memory indexing of the JSQuAD corpus
// (analysis, BM25, local embedder fit and embedding).
func BenchmarkIndexJSQuAD(b *testing.B) {
	if _, err := os.Stat(jsquad); err != nil {
		b.Skip("dataset not present")
	}
	ds, err := loadDataset(jsquad)
	if err != nil {
		b.Fatal(err)
	}
	chunks := DocChunks(ds)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(chunks)*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

func TestAgentKPIs(t *testing.T) {
	qs, err := LoadQuestions("../../eval/eval_dataset.json")
	if err != nil || len(qs) < 8 {
		t.Fatalf("questions: %d, %v", len(qs), err)
	}
	var cs []chunk.Chunk
	for i, txt := range []string{
		"# バックアップからの復旧手順\n復旧ポイントを選び、リストアを実施する。",
		"# ログ保管・管理規程\nログの保管期間は1年とする。",
		"# マルウェア感染端末の隔離手順\n感染端末はネットワークから隔離する。",
	} {
		cs = append(cs, chunk.Chunk{ID: fmt.Sprint(i), File: fmt.Sprintf("database/d%d/page_001.md", i), Text: txt})
	}
	ix, err := index.FromChunks(context.Background(), cs, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	reps, err := Agent(context.Background(), retrieve.New(ix), []string{"バックアップの復旧手順と、ログの保管期間を教えて", "感染端末の隔離"}, []string{"fast", "balanced", "deep"}, retrieve.Options{BM25Weight: 0.6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 3 || reps[0].Questions != 2 {
		t.Fatalf("reports %+v", reps)
	}
	if !(reps[0].AvgCalls <= reps[1].AvgCalls && reps[1].AvgCalls <= reps[2].AvgCalls) {
		t.Errorf("calls should grow fast ≤ balanced ≤ deep: %v %v %v", reps[0].AvgCalls, reps[1].AvgCalls, reps[2].AvgCalls)
	}
	if reps[0].AvgRounds != 1 {
		t.Errorf("fast ran %v rounds", reps[0].AvgRounds)
	}
	for _, r := range reps {
		// Extractive answers quote their evidence: every claim is supported
		// by the chunk it cites.
		if r.SupportedRate != 1 || r.CitationPrecision != 1 {
			t.Errorf("%s: answer_supported_rate %v, citation_precision %v; want 1, 1", r.Profile, r.SupportedRate, r.CitationPrecision)
		}
		if r.Top10Relevance <= 0 || r.Top10Relevance > r.Top5Relevance+1e-9 {
			t.Errorf("%s: top10 relevance %v must be positive and at most top5 %v", r.Profile, r.Top10Relevance, r.Top5Relevance)
		}
	}
}
