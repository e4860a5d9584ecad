package assistant_test

import (
	"context"
	"slices"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/retrieve"
)

// reverse is a re-ranker that puts the search's last result first.
type reverse struct{}

func (reverse) Score(x []float64) float64 {
	return x[slices.Index(retrieve.RerankFeatureNames(), "log_rank")]
}

// TestRerankStage: with a re-ranker the pipeline searches
// retrieve.RerankDepth deep, lets it reorder and keeps the best K (the
// reply says the stage ran); an English question and an assistant
// without a re-ranker keep the search's order.
func TestRerankStage(t *testing.T) {
	ctx := context.Background()
	ix := demoIndex(t)
	s := retrieve.New(ix)
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	opt := retrieve.Options{K: 4, BM25Weight: 0.6}
	const q = "VPNに接続できないときはどうすればよいですか"
	deep := opt
	deep.K = retrieve.RerankDepth
	all, _, err := s.Search(ctx, analysis.SearchQuery(q), deep)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 5 {
		t.Fatalf("the demo corpus gives %d results", len(all))
	}
	for _, tt := range []struct {
		name     string
		rr       retrieve.Reranker
		q        string
		reranked bool
	}{
		{"re-ranked", reverse{}, q, true},
		{"no re-ranker", nil, q, false},
		{"English question", reverse{}, "How do I connect to the VPN?", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := assistant.New(s, gen, nil, assistant.Options{Search: opt, Reranker: tt.rr})
			rep, err := a.Ask(ctx, assistant.Request{Query: tt.q})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Reranked != tt.reranked {
				t.Errorf("reranked %v, want %v", rep.Reranked, tt.reranked)
			}
			if tt.reranked && rep.SearchResults[0].ChunkID != all[len(all)-1].ChunkID {
				t.Errorf("first result %s, want the search's last %s", rep.SearchResults[0].ChunkID, all[len(all)-1].ChunkID)
			}
			if !tt.reranked && tt.q == q && rep.SearchResults[0].ChunkID != all[0].ChunkID {
				t.Errorf("first result %s, want the search's first %s", rep.SearchResults[0].ChunkID, all[0].ChunkID)
			}
			if len(rep.SearchResults) > opt.K {
				t.Errorf("%d results, K = %d", len(rep.SearchResults), opt.K)
			}
		})
	}
}
