package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

const jsquadDir = "../../../shared/datasets/jsquad-valid"

// TestBenchCommands runs the quality benchmarks on the first JSQuAD
// questions through the CLI and checks what they print.
func TestBenchCommands(t *testing.T) {
	if _, err := os.Stat(jsquadDir); err != nil {
		t.Skip("dataset not present")
	}
	if testing.Short() {
		t.Skip("indexes the JSQuAD corpus three times")
	}
	offlineEnv(t)

	out := mustRun(t, "bench", "refusal", "--dir", jsquadDir, "--max-queries", "100")
	for _, want := range []string{"100 questions, top 4, threshold 0.50", "holdout paragraph (1.0 documents hidden per question)", "holdout article", "best balance:", "refused_or_correct"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench refusal output lacks %q:\n%s", want, out)
		}
	}

	var legs struct {
		Queries    int     `json:"queries"`
		Both       int     `json:"top1_both"`
		BM25Only   int     `json:"top1_bm25_only"`
		VectorOnly int     `json:"top1_vector_only"`
		Neither    int     `json:"top1_neither"`
		BM25       float64 `json:"bm25_ndcg@10"`
		Oracle     float64 `json:"oracle_ndcg@10"`
	}
	out = mustRun(t, "bench", "beir", "--dir", jsquadDir, "--legs", "--max-queries", "100", "--json")
	if err := json.Unmarshal([]byte(out), &legs); err != nil {
		t.Fatalf("bench beir --legs --json: %v\n%s", err, out)
	}
	if legs.Queries != 100 || legs.Both+legs.BM25Only+legs.VectorOnly+legs.Neither != 100 || legs.Oracle < legs.BM25 || legs.BM25 < 0.8 {
		t.Errorf("legs report %+v", legs)
	}

	var ans struct {
		Questions int     `json:"questions"`
		Rate      float64 `json:"containment_rate"`
	}
	out = mustRun(t, "bench", "answers", "--dir", jsquadDir, "--max-queries", "100", "--json")
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("bench answers --json: %v\n%s", err, out)
	}
	if ans.Questions != 100 || ans.Rate < 0.8 {
		t.Errorf("answers report %+v; want 100 questions and containment ≥ 0.8", ans)
	}
}
