package assistant_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/agent"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/retrieve"
)

// agentRetriever is the agentic loop as a Retriever (cmd/shirube wires
// the same).
func agentRetriever(profile string, tok agent.Tokenizer) assistant.Retriever {
	return func(ctx context.Context, s *retrieve.Searcher, q string, opt retrieve.Options) (assistant.Retrieval, error) {
		res, err := agent.Run(ctx, q, agent.Options{Profile: profile, Searcher: s, Tokenizer: tok, Search: opt})
		if err != nil {
			return assistant.Retrieval{}, err
		}
		var parts []string
		for _, f := range res.Facets {
			parts = append(parts, f.Text)
		}
		return assistant.Retrieval{Results: res.Evidence, Unknowns: res.Unknowns, Parts: parts}, nil
	}
}

// TestProfilesAnswerLikePlain: every profile's evidence opens with the
// plain search's hits, in their order, so the top result is the plain
// path's (and with fast, the answer to a one-part question); the demo's two runbook
// questions are answered with their steps in every profile (the
// procedure look-ahead reaches the agent's first search too).
func TestProfilesAnswerLikePlain(t *testing.T) {
	ix := demoIndex(t)
	s := retrieve.New(ix)
	gen := extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	base := assistant.Options{Search: retrieve.Options{K: 4, BM25Weight: 0.6, AutoWeight: true}, ProcedureLookahead: 3}
	plain := assistant.New(s, gen, nil, base)
	ctx := context.Background()
	for q, want := range map[string]string{
		"アカウントロックアウトの解除手順は？":  "Unlock-ADAccount -Identity",
		"マルウェアに感染した端末の隔離手順は？": "「ネットワーク封じ込め」を実行して端末をネットワークから隔離する",
		"ログの保管期間はどれくらいですか？":   "",
	} {
		p, err := plain.Ask(ctx, assistant.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"fast", "balanced", "deep"} {
			opt := base
			opt.Retrieve = agentRetriever(name, ix.Analyzer())
			rep, err := assistant.New(s, gen, nil, opt).Ask(ctx, assistant.Request{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.SearchResults) == 0 || len(p.SearchResults) == 0 || rep.SearchResults[0].ChunkID != p.SearchResults[0].ChunkID {
				t.Errorf("%s %s: top result %v, want the plain search's %v", name, q, ids(rep.SearchResults), ids(p.SearchResults))
			}
			// fast's evidence cap is the plain K: nothing is added to a
			// one-part question's lead, so the answer is the plain one.
			if name == "fast" && rep.Answer != p.Answer {
				t.Errorf("%s %s: answer %q, want the plain path's %q", name, q, rep.Answer, p.Answer)
			}
			if want != "" && !strings.Contains(rep.Answer, want) {
				t.Errorf("%s %s: answer %q lacks %q", name, q, rep.Answer, want)
			}
		}
	}
}

func ids(rs []retrieve.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ChunkID)
	}
	return out
}
