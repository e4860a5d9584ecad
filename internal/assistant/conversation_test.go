package assistant_test

import (
	"context"
	"testing"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/eval/evalset"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
)

// asker runs eval cases through an Assistant, with or without their
// conversation_context.
type asker struct {
	a           *assistant.Assistant
	dropContext bool
}

func (k asker) Ask(ctx context.Context, q string, history []llm.Message) (assistant.Reply, error) {
	if k.dropContext {
		history = nil
	}
	return k.a.Ask(ctx, assistant.Request{Query: q, History: history, SessionID: "eval"})
}

// TestConversationCasesNeedTheirContext: every conversation case of the
// shipped eval dataset passes with its conversation_context — the
// follow-up is rewritten into a stand-alone question offline — and fails
// without it, so the cases really test the conversation.
func TestConversationCasesNeedTheirContext(t *testing.T) {
	a := newAssistant(t, t.TempDir())
	run := func(drop bool) map[string]evalset.CaseResult {
		res, err := evalset.Run(context.Background(), evalset.Options{Dataset: "../../eval/eval_dataset.json", Asker: asker{a, drop}, OutDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]evalset.CaseResult{}
		for _, c := range res.Cases {
			if c.Category == "conversation" {
				out[c.ID] = c
			}
		}
		return out
	}
	with, without := run(false), run(true)
	if len(with) < 3 {
		t.Fatalf("%d conversation cases, want at least 3 (with the seed's own example)", len(with))
	}
	for id, c := range with {
		t.Logf("%s with context: %.1f %v rewritten %q flags %+v cited %v", id, c.Score, c.Passed, c.RewrittenQuery, c.Flags, c.Cited)
		w := without[id]
		t.Logf("%s without:      %.1f %v flags %+v cited %v", id, w.Score, w.Passed, w.Flags, w.Cited)
		if !c.Passed || c.RewrittenQuery == "" {
			t.Errorf("%s fails with its context (score %.1f, rewritten %q): %+v", id, c.Score, c.RewrittenQuery, c.Checks)
		}
		if w.Passed {
			t.Errorf("%s passes without its context (score %.1f): it does not test the conversation", id, w.Score)
		}
	}
}

// TestSeedFollowUpExample: seed 002 §7.1 test_004 — 「その手順の詳細を教えて」
// after 「ログインできない場合の対処法は？」 — is rewritten offline into a
// stand-alone question with the previous turn's subject and is not sent
// back as ambiguous; the same words without the context get the
// clarification template.
func TestSeedFollowUpExample(t *testing.T) {
	a := newAssistant(t, t.TempDir())
	ctx := context.Background()
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "ログインできない場合の対処法は？"},
		{Role: llm.RoleAssistant, Content: "..."},
	}
	rep, err := a.Ask(ctx, assistant.Request{Query: "その手順の詳細を教えて", History: history})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RewrittenQuery != "ログインできない場合の対処法の手順の詳細を教えて" || rep.Flags.AmbiguousQuery {
		t.Errorf("with context: rewritten %q, flags %+v; want the subject carried and no clarification", rep.RewrittenQuery, rep.Flags)
	}
	rep, err = a.Ask(ctx, assistant.Request{Query: "その手順の詳細を教えて"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Flags.AmbiguousQuery || rep.Answer != guard.AmbiguousQueryResponse {
		t.Errorf("without context: flags %+v, answer %q; want the clarification template", rep.Flags, rep.Answer)
	}
}
