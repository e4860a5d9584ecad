package answer

import (
	"context"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// recheckAnswer is the model's answer: a paraphrase the lexical check
// cannot confirm (「直ちに切り離す」 for 「ネットワークから隔離する」) and an
// invented step.
const recheckAnswer = "感染した端末は直ちに切り離します [1]。\n- 切り離した端末は翌営業日に廃棄業者へ引き渡します [1]。"

// TestLLMRecheckThroughOpenAI drives the LLM generator through openai-go
// against a fake server: the answer, then the re-check of the claims the
// lexical check could not confirm, in JSON mode.
func TestLLMRecheckThroughOpenAI(t *testing.T) {
	tests := []struct {
		name        string
		recheck     llmtest.Reply
		lexicalOnly bool
		wantText    string
		wantUnknown int
		wantCalls   int
		wantMethod  string
		wantError   bool
	}{
		{"model confirms the paraphrase, rejects the invention",
			llmtest.Reply{Text: `{"claims":[{"n":1,"supported":true,"evidence":[1]},{"n":2,"supported":false,"evidence":[]}]}`, PromptTokens: 300, CompletionTokens: 30},
			false, "感染した端末は直ちに切り離します [1]。", 1, 2, "lexical+llm", false},
		{"unreadable re-check: the lexical verdicts stand",
			llmtest.Reply{Text: "I think both are fine.", PromptTokens: 300, CompletionTokens: 30},
			false, "", 2, 2, "lexical", true},
		{"lexical only: no second call", llmtest.Reply{}, true, "", 2, 1, "lexical", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
				if r.Calls == 1 {
					return llmtest.Reply{Text: recheckAnswer, Model: "gpt-4o-mini", PromptTokens: 1000, CompletionTokens: 50}
				}
				rep := tt.recheck
				rep.Model = "gpt-4o-mini"
				return rep
			})
			c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.BaseURL(), MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			g := NewLLM(c, c, LLMOptions{Tokenizer: analyser(t), LexicalOnly: tt.lexicalOnly})
			a, err := g.Generate(context.Background(), "感染した端末はどうしますか？", runbook())
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != tt.wantText || len(a.Unknowns) != tt.wantUnknown || srv.Calls() != tt.wantCalls {
				t.Fatalf("text %q, unknowns %q, %d calls; want %q, %d unknowns, %d calls", a.Text, a.Unknowns, srv.Calls(), tt.wantText, tt.wantUnknown, tt.wantCalls)
			}
			v := a.Verification
			if v.Method != tt.wantMethod || (v.RecheckError != "") != tt.wantError {
				t.Errorf("method %q, recheck error %q", v.Method, v.RecheckError)
			}
			// Both calls' tokens are counted, and priced.
			wantPrompt := 1000
			if tt.wantCalls == 2 {
				wantPrompt += 300
			}
			if a.Usage.PromptTokens != wantPrompt || a.CostUSD <= 0 {
				t.Errorf("usage %+v, cost %v; want %d prompt tokens", a.Usage, a.CostUSD, wantPrompt)
			}
			if tt.wantCalls < 2 {
				return
			}
			req := srv.Requests()[1]
			rf, _ := req.Body["response_format"].(map[string]any)
			if !strings.HasPrefix(req.System, "You verify claims against quoted evidence.") || rf["type"] != "json_object" {
				t.Errorf("re-check request: system %.60q, response_format %v", req.System, req.Body["response_format"])
			}
			for _, want := range []string{`<evidence n="1" file="database/soc/runbook/page_003.md">`, "1. 感染した端末は直ちに切り離します。 (cites 1)", "2. 切り離した端末は翌営業日に廃棄業者へ引き渡します。 (cites 1)"} {
				if !strings.Contains(req.User, want) {
					t.Errorf("re-check prompt lacks %q:\n%s", want, req.User)
				}
			}
			if tt.wantMethod == "lexical+llm" {
				c0, c1 := v.Claims[0], v.Claims[1]
				if !c0.Supported || c0.CheckedBy != "llm" || len(c0.SupportedBy) != 1 || c1.Supported || c1.CheckedBy != "llm" || v.SupportedRate != 0.5 || v.CitationPrecision != 0.5 {
					t.Errorf("verification %+v", v)
				}
			}
		})
	}
}

// TestLLMRecheckThroughAnthropic: the same re-check through
// anthropic-sdk-go, where JSON is asked for in the prompt and the reply
// may come wrapped in a code fence.
func TestLLMRecheckThroughAnthropic(t *testing.T) {
	srv := llmtest.Anthropic(t, func(r llmtest.Request) llmtest.Reply {
		if r.Calls == 1 {
			return llmtest.Reply{Text: recheckAnswer, PromptTokens: 1000, CompletionTokens: 50}
		}
		return llmtest.Reply{Text: "```json\n{\"claims\":[{\"n\":1,\"supported\":true,\"evidence\":[1]},{\"n\":2,\"supported\":false}]}\n```", PromptTokens: 300, CompletionTokens: 30}
	})
	c, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", BaseURL: srv.BaseURL(), Model: "haiku", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewLLM(c, c, LLMOptions{Tokenizer: analyser(t)}).Generate(context.Background(), "感染した端末はどうしますか？", runbook())
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != "感染した端末は直ちに切り離します [1]。" || len(a.Unknowns) != 1 || srv.Calls() != 2 || a.Verification.Method != "lexical+llm" {
		t.Errorf("text %q, unknowns %q, %d calls, verification %+v", a.Text, a.Unknowns, srv.Calls(), a.Verification)
	}
	if a.Usage.PromptTokens != 1300 || a.Usage.CompletionTokens != 80 {
		t.Errorf("usage %+v: both calls counted", a.Usage)
	}
	if sys := srv.Requests()[1].System; !strings.Contains(sys, "You verify claims") || !strings.Contains(sys, "JSON") {
		t.Errorf("re-check system prompt %q", sys)
	}
}
