package ir

import (
	"os"
	"path/filepath"
	"testing"
)

const jqaraDir = "../../../../shared/datasets/jqara-runs"

// TestJQaRAReproducesPublished checks the metrics against the figures JQaRA
// publishes for its three reference runs, at the precision they are given.
func TestJQaRAReproducesPublished(t *testing.T) {
	if _, err := os.Stat(jqaraDir); err != nil {
		t.Skipf("JQaRA runs not available at %s: %v", jqaraDir, err)
	}
	q, err := OpenQrels(filepath.Join(jqaraDir, "qrels.trec"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		run       string
		ndcg, mrr float64
		ndcgTol   float64
		mrrTol    float64
	}{
		{"bm25", 0.458, 0.702, 0.0005, 0.0005},
		{"multilingual-e5-small", 0.4917, 0.7291, 0.00005, 0.00005},
		{"multilingual-e5-large", 0.554, 0.7988, 0.0005, 0.00005},
	}
	for _, tt := range tests {
		t.Run(tt.run, func(t *testing.T) {
			run, err := OpenRun(filepath.Join(jqaraDir, "runs", tt.run+".trec.gz"))
			if err != nil {
				t.Fatal(err)
			}
			res := Evaluate(q, run)
			t.Logf("%s: ndcg@10=%.6f mrr@10=%.6f recall@10=%.6f recall@100=%.6f queries=%d missing=%d skipped=%d",
				tt.run, res.NDCG10, res.MRR10, res.Recall10, res.Recall100, res.Queries, res.Missing, res.Skipped)
			if res.Queries != 1667 || res.Missing != 0 || res.Skipped != 0 {
				t.Errorf("queries/missing/skipped = %d/%d/%d, want 1667/0/0", res.Queries, res.Missing, res.Skipped)
			}
			if d := res.NDCG10 - tt.ndcg; d <= -tt.ndcgTol || d >= tt.ndcgTol {
				t.Errorf("nDCG@10 = %.6f, want %v ± %v", res.NDCG10, tt.ndcg, tt.ndcgTol)
			}
			if d := res.MRR10 - tt.mrr; d <= -tt.mrrTol || d >= tt.mrrTol {
				t.Errorf("MRR@10 = %.6f, want %v ± %v", res.MRR10, tt.mrr, tt.mrrTol)
			}
		})
	}
}
