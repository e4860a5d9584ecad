package assistant_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// Pages of the two generations of TestAnswerAcrossSwitch: the second no
// longer has removed (its source was deleted; the build deletes its page
// files right after the switch).
const (
	removedPage = "database/runbooks/backup_old/page_001.md"
	keptPage    = "database/runbooks/backup_new/page_001.md"
)

func generationSearcher(t *testing.T, withRemoved bool) *retrieve.Searcher {
	t.Helper()
	chunks := []chunk.Chunk{{ID: "new", File: keptPage, Source: "runbooks/backup_new.md", Page: 1, Heading: "バックアップの復元",
		Text: "# バックアップの復元\nバックアップの復元は、管理画面で復元ポイントを選び、復元を実行する。"}}
	if withRemoved {
		chunks = append(chunks, chunk.Chunk{ID: "old", File: removedPage, Source: "runbooks/backup_old.md", Page: 1, Heading: "バックアップの復元手順",
			Text: "# バックアップの復元手順\nバックアップの復元手順：テープ装置からバックアップを読み込み、復元手順に従って復元する。"})
	}
	ix, err := index.FromChunks(context.Background(), chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	return retrieve.New(ix)
}

// switching answers extractively; on its first call it first swaps the
// assistant to next, as the watcher does when a build switches
// generations while a question is being answered.
type switching struct {
	e     *answer.Extractive
	a     **assistant.Assistant
	next  *retrieve.Searcher
	calls *[][]string // files of the results each call got
}

func (g switching) Generate(ctx context.Context, q string, rs []retrieve.Result, _ []llm.Message) (answer.Answer, error) {
	var files []string
	for _, r := range rs {
		files = append(files, r.File)
	}
	*g.calls = append(*g.calls, files)
	if len(*g.calls) == 1 {
		(*g.a).Swap(g.next)
	}
	return g.e.Generate(ctx, q, rs)
}

type streamingSwitch struct{ switching }

func (g streamingSwitch) GenerateStream(ctx context.Context, q string, rs []retrieve.Result, h []llm.Message, onDelta func(string)) (answer.Answer, error) {
	ans, err := g.Generate(ctx, q, rs, h)
	onDelta(ans.Text)
	return ans, err
}

// TestAnswerAcrossSwitch: a question answered across a switch of
// generations never cites a page the new generation removed — answered
// again from the new generation, or, when its text was already streamed,
// with those citations dropped and said so; and with a freshen function,
// a question asked after the switch is answered from the new generation
// from the start, whatever the watcher's poll.
func TestAnswerAcrossSwitch(t *testing.T) {
	const q = "バックアップの復元手順は？"
	opt := assistant.Options{Search: retrieve.Options{K: 2, BM25Weight: 0.6}, EvidenceThreshold: 0.01}
	cites := func(rep assistant.Reply, page string) bool {
		return slices.ContainsFunc(rep.Evidence, func(e answer.Evidence) bool { return strings.HasPrefix(e.File, page) })
	}
	for _, streamed := range []bool{false, true} {
		old, cur := generationSearcher(t, true), generationSearcher(t, false)
		var a *assistant.Assistant
		var calls [][]string
		sw := switching{e: answer.NewExtractive(old.Index().Analyzer(), answer.ExtractiveOptions{}), a: &a, next: cur, calls: &calls}
		req := assistant.Request{Query: q}
		if streamed {
			a = assistant.New(old, streamingSwitch{sw}, nil, opt)
			req.OnDelta = func(string) {}
		} else {
			a = assistant.New(old, sw, nil, opt)
		}
		rep, err := a.Ask(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) == 0 || !slices.Contains(calls[0], removedPage) {
			t.Fatalf("streamed=%v: the first answer should be made from the old generation's %s: %v", streamed, removedPage, calls)
		}
		if cites(rep, removedPage) {
			t.Errorf("streamed=%v: the answer cites the removed %s: %+v", streamed, removedPage, rep.Evidence)
		}
		for _, r := range rep.SearchResults {
			if r.File == removedPage {
				t.Errorf("streamed=%v: search results still hold %s", streamed, removedPage)
			}
		}
		if streamed {
			if len(calls) != 1 || !slices.Contains(rep.Unknowns, assistant.RemovedSourcesNote) {
				t.Errorf("streamed: %d generations, unknowns %q: want the streamed answer kept, its citation dropped and said so", len(calls), rep.Unknowns)
			}
		} else if len(calls) != 2 || !cites(rep, keptPage) || slices.Contains(calls[1], removedPage) {
			t.Errorf("not streamed: calls %v, evidence %+v: want it answered again from the new generation", calls, rep.Evidence)
		}
	}

	// With a freshen function the switch is seen before the question is
	// searched: one answer, from the new generation.
	old, cur := generationSearcher(t, true), generationSearcher(t, false)
	var a *assistant.Assistant
	var calls [][]string
	a = assistant.New(old, switching{e: answer.NewExtractive(old.Index().Analyzer(), answer.ExtractiveOptions{}), a: &a, next: cur, calls: &calls}, nil, opt)
	freshened := 0
	a.SetFreshen(func(context.Context) { freshened++; a.Swap(cur) })
	rep, err := a.Ask(context.Background(), assistant.Request{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if freshened == 0 || len(calls) != 1 || slices.Contains(calls[0], removedPage) || cites(rep, removedPage) {
		t.Errorf("freshen called %d times, calls %v: want one answer from the new generation", freshened, calls)
	}
}
