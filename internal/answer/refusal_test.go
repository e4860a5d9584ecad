package answer

import (
	"context"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// TestLLMRefusalSurvivesVerification: the model declines (「…記載があり
// ません。」) through openai-go against a fake server. The claim check must
// keep the refusal as the answer — not remove it as an unsupported claim,
// leaving an empty answer — and must not ask the model to re-check it.
func TestLLMRefusalSurvivesVerification(t *testing.T) {
	for _, refusal := range []string{
		"提供された資料には、社員食堂の営業時間についての記載がありません。",
		"社員食堂の営業時間は資料からは分かりません。",
		"社員食堂の営業時間に関する情報がありません。",
	} {
		t.Run(refusal, func(t *testing.T) {
			srv := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
				if r.Calls == 1 {
					return llmtest.Reply{Text: refusal, Model: "gpt-4o-mini"}
				}
				// A re-check would call the refusal unsupported.
				return llmtest.Reply{Text: `{"claims":[{"n":1,"supported":false,"evidence":[]}]}`, Model: "gpt-4o-mini"}
			})
			c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.BaseURL(), MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			a, err := NewLLM(c, c, LLMOptions{Tokenizer: analyser(t)}).Generate(context.Background(), "社員食堂の営業時間は？", runbook())
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(a.Text) != refusal {
				t.Errorf("answer %q; want the refusal kept as it is", a.Text)
			}
			if !IsRefusal(a.Text) {
				t.Errorf("IsRefusal(%q) = false", a.Text)
			}
			if a.Verification == nil || len(a.Verification.Claims) != 0 {
				t.Errorf("verification %+v; want no claim", a.Verification)
			}
			if srv.Calls() != 1 {
				t.Errorf("%d calls; want 1 (nothing to re-check)", srv.Calls())
			}
		})
	}
}

// TestVerifyKeepsPartialRefusal: in an answer that states one fact and
// declines another, the fact is checked and the refusal is no claim.
func TestVerifyKeepsPartialRefusal(t *testing.T) {
	ev := map[int]string{1: "監査ログの保管期間は1年とする。"}
	text := "監査ログの保管期間は1年です [1]。\nなお、削除の手順については記載がありません。"
	v := VerifyClaims(text, ev, bigrams{}, 0)
	if len(v.Claims) != 1 || !v.Claims[0].Supported {
		t.Fatalf("claims %+v; want the one supported fact", v.Claims)
	}
	if got := v.WithoutUnsupported(text); got != text {
		t.Errorf("text changed to %q", got)
	}
}
