package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

// fixedReader judges every evidence set answerable with one probability.
type fixedReader float64

func (r fixedReader) SentenceScore(x []float64) float64 { return 0 }
func (r fixedReader) Answerability(x []float64) float64 { return float64(r) }
func (r fixedReader) AnswerThreshold() float64          { return 0.5 }

// TestGateAppliesReader checks that the refusal gate of `bench answers`
// and `bench refusal` is ask's: the near-miss checks, and the reader's
// answerability when there is a reader.
func TestGateAppliesReader(t *testing.T) {
	ctx := context.Background()
	var cs []chunk.Chunk
	for i, txt := range []string{
		"# ログ保管・管理規程\nログの保管期間は1年とする。",
		"# バックアップからの復旧手順\n復旧ポイントを選び、リストアを実施する。",
	} {
		cs = append(cs, chunk.Chunk{ID: fmt.Sprint(i), File: fmt.Sprintf("database/d%d/page_001.md", i), Text: txt})
	}
	ix, err := index.FromChunks(ctx, cs, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	s := retrieve.New(ix)
	q := "ログの保管期間は？"
	res, _, err := s.Search(ctx, q, retrieve.Options{K: 2, BM25Weight: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		reader fixedReader
		use    bool
		want   bool
	}{
		{"rules only", 0, false, false},
		{"reader finds it answerable", 0.9, true, false},
		{"reader finds it unanswerable", 0.1, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate(ix.Analyzer(), s, nil)
			if tt.use {
				g = newGate(ix.Analyzer(), s, tt.reader)
			}
			if got := g.refuses(ctx, q, res); got != tt.want {
				t.Errorf("refuses = %v, want %v", got, tt.want)
			}
		})
	}
}
