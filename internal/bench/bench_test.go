package bench

import (
	"context"
	"os"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/index"
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
