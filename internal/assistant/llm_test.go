package assistant_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
	"github.com/shirube/shirube/internal/retrieve"
)

// noWait retries at once.
func noWait(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// llmSetup is an assistant answering with the real OpenAI SDK against a
// fake server, the extractive generator as its fallback.
type llmSetup struct {
	a      *assistant.Assistant
	client *llm.OpenAI
	logs   string
	warns  *[]string
}

func newLLMAssistant(t *testing.T, srv *llmtest.Server, call time.Duration, opt assistant.Options) llmSetup {
	t.Helper()
	ix := demoIndex(t)
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.BaseURL(), Sleep: noWait, CallTimeout: call})
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	var warns []string
	opt.Search = retrieve.Options{K: 4, BM25Weight: 0.6}
	opt.Fallback = extractive{answer.NewExtractive(ix.Analyzer(), answer.ExtractiveOptions{})}
	opt.Warn = func(s string) { warns = append(warns, s) }
	gen := answer.Conversational{LLM: answer.NewLLM(c, c, answer.LLMOptions{Tokenizer: ix.Analyzer(), LexicalOnly: true})}
	a := assistant.New(retrieve.New(ix), gen, auditlog.Open(logs, auditlog.Options{}), opt)
	return llmSetup{a: a, client: c, logs: logs, warns: &warns}
}

const question = "バックアップからの復旧手順は？"

// TestLLMUnavailableFallsBack: when the model fails after its retries (or
// runs past --llm-timeout), the question is answered extractively from the
// same evidence, with a Japanese notice and no internals, and the audit
// log records the failure.
func TestLLMUnavailableFallsBack(t *testing.T) {
	cases := []struct {
		name   string
		reply  llmtest.Reply
		reason string // LLMError, or its start: how many attempts fit in a timeout depends on the machine
		ja     string // in the notice
		stream bool
	}{
		{"server error", llmtest.Reply{Status: 500}, "server_error: HTTP 500 after 4 attempts", "サーバーでエラー", false},
		{"server error, streaming", llmtest.Reply{Status: 503}, "server_error: HTTP 503 after 4 attempts", "サーバーでエラー", true},
		{"never answers", llmtest.Reply{Delay: time.Hour}, "timeout", "制限時間内に応答がありませんでした", false},
		{"never answers, streaming", llmtest.Reply{Delay: time.Hour}, "timeout", "制限時間内に応答がありませんでした", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply { return tc.reply })
			s := newLLMAssistant(t, srv, 300*time.Millisecond, assistant.Options{})
			var streamed strings.Builder
			req := assistant.Request{Query: question, SessionID: "s1"}
			if tc.stream {
				req.OnDelta = func(d string) { streamed.WriteString(d) }
			}
			rep, err := s.a.Ask(context.Background(), req)
			if err != nil {
				t.Fatalf("Ask failed instead of falling back: %v", err)
			}
			if !rep.LLMUnavailable || rep.Outcome != auditlog.OutcomeLLMUnavailable || !strings.HasPrefix(rep.LLMError, tc.reason) || rep.Generator != "extractive" {
				t.Errorf("reply: unavailable %v, outcome %q, llm_error %q, generator %q", rep.LLMUnavailable, rep.Outcome, rep.LLMError, rep.Generator)
			}
			if !strings.HasPrefix(rep.Answer, rep.Notice) || !strings.Contains(rep.Notice, tc.ja) || !strings.Contains(rep.Notice, "抜粋") {
				t.Errorf("notice %q / answer %q", rep.Notice, rep.Answer)
			}
			if len(rep.Evidence) == 0 || !strings.Contains(rep.Answer, "[1]") {
				t.Errorf("no extractive answer with citations: %q", rep.Answer)
			}
			for _, leak := range []string{"http", "127.0.0.1", "openai", "request for model"} {
				if strings.Contains(rep.Answer, leak) || strings.Contains(rep.Notice, leak) {
					t.Errorf("user sees internals %q: %q", leak, rep.Answer)
				}
			}
			if tc.stream && !strings.Contains(streamed.String(), rep.Notice) {
				t.Errorf("stream did not deliver the notice: %q", streamed.String())
			}
			es := readLog(t, s.logs)
			if len(es) != 1 || !es[0].LLMUnavailable || !strings.HasPrefix(es[0].LLMError, tc.reason) || es[0].Outcome != auditlog.OutcomeLLMUnavailable || es[0].Answer != rep.Answer {
				t.Errorf("audit log: %+v", es)
			}
		})
	}
}

// TestStreamCutOffMarkedIncomplete: a model stream that stops mid-answer
// (no final chunk, or a dropped connection) is shown with a notice and
// marked incomplete in the reply and the audit log, not passed off as a
// normal answer.
func TestStreamCutOffMarkedIncomplete(t *testing.T) {
	for _, drop := range []bool{false, true} {
		srv := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Text: "バックアップからの復旧は次の手順で行います [1]。 1. 復旧対象を確認する。", Chunks: 6, CutAfter: 3, Drop: drop}
		})
		s := newLLMAssistant(t, srv, 0, assistant.Options{})
		rep, err := s.a.Ask(context.Background(), assistant.Request{Query: question, OnDelta: func(string) {}})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Incomplete || rep.Outcome != auditlog.OutcomeIncomplete || rep.Notice != assistant.NoticeIncomplete || !strings.HasPrefix(rep.Answer, assistant.NoticeIncomplete) {
			t.Errorf("drop=%v: reply incomplete %v, outcome %q, answer %q", drop, rep.Incomplete, rep.Outcome, rep.Answer)
		}
		if !strings.Contains(rep.Answer, "復旧") {
			t.Errorf("partial text lost: %q", rep.Answer)
		}
		es := readLog(t, s.logs)
		if len(es) != 1 || !es[0].Incomplete || es[0].Outcome != auditlog.OutcomeIncomplete || !strings.HasPrefix(es[0].LLMError, "incomplete (") {
			t.Errorf("audit log: %+v", es)
		}
	}
}

// TestEveryQuestionLogged: a question that fails — the answer's time limit
// runs out (the web server's 504), the client goes away mid-stream — still
// gets its audit line, saying how it ended.
func TestEveryQuestionLogged(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		srv := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} })
		s := newLLMAssistant(t, srv, 0, assistant.Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := s.a.Ask(ctx, assistant.Request{Query: question, SessionID: "web"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the deadline", err)
		}
		es := readLog(t, s.logs)
		if len(es) != 1 || es[0].Outcome != auditlog.OutcomeTimeout || es[0].Query != question || es[0].Error == "" {
			t.Errorf("audit log: %+v", es)
		}
	})
	t.Run("client disconnects mid-stream", func(t *testing.T) {
		srv := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Text: strings.Repeat("手順を説明します。", 20), Chunks: 20, ChunkDelay: 20 * time.Millisecond}
		})
		s := newLLMAssistant(t, srv, 0, assistant.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := s.a.Ask(ctx, assistant.Request{Query: question, OnDelta: func(string) { cancel() }})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want cancelled", err)
		}
		es := readLog(t, s.logs)
		if len(es) != 1 || es[0].Outcome != auditlog.OutcomeCancelled || !es[0].Incomplete || !strings.HasPrefix(es[0].Answer, "手順を説明します。") {
			t.Errorf("audit log (want the streamed part, marked incomplete): %+v", es)
		}
	})
}

// TestChatCountsRewriteTokens: a follow-up rewritten by the model costs a
// call; its tokens and cost are counted with the answer's, in the reply
// and the audit log.
func TestChatCountsRewriteTokens(t *testing.T) {
	srv := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if r.System == answer.RewriteSystemPrompt {
			return llmtest.Reply{Text: "バックアップからの復旧手順の詳細", PromptTokens: 10, CompletionTokens: 5}
		}
		return llmtest.Reply{Text: "復旧対象を確認します [1]。", PromptTokens: 100, CompletionTokens: 20}
	})
	s := newLLMAssistant(t, srv, 0, assistant.Options{})
	conv := answer.NewSession(answer.SessionOptions{Rewriter: s.client, Model: "gpt-4o-mini"})
	conv.Add(question, "…")
	rep, err := s.a.Ask(context.Background(), assistant.Request{Query: "その手順の詳細を教えて", Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 2 || rep.RewrittenQuery != "バックアップからの復旧手順の詳細" {
		t.Fatalf("%d calls, rewritten %q", srv.Calls(), rep.RewrittenQuery)
	}
	want := llm.Usage{PromptTokens: 110, CompletionTokens: 25, TotalTokens: 135}
	price := llm.DefaultPrices()
	wantCost := price.Cost("gpt-4o-mini", llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}) + price.Cost("gpt-4o-mini", llm.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120})
	if rep.TokenUsage != want || !near(rep.CostUSD, wantCost) {
		t.Errorf("usage %+v $%g, want %+v $%g", rep.TokenUsage, rep.CostUSD, want, wantCost)
	}
	es := readLog(t, s.logs)
	if len(es) != 1 || es[0].TokenUsage.TotalTokens != 135 || !near(es[0].CostUSD, wantCost) {
		t.Errorf("audit log: %+v", es)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// TestSlowAnswerWarns: an answer taking over 5 s logs a warning (seed 002
// §9); a quick one does not. The clock is injected.
func TestSlowAnswerWarns(t *testing.T) {
	for _, step := range []time.Duration{6 * time.Second, time.Second} {
		now := time.Date(2025, 1, 1, 9, 0, 0, 0, time.Local)
		var warns []string
		a := assistant.New(retrieve.New(demoIndex(t)), extractive{answer.NewExtractive(demoIndex(t).Analyzer(), answer.ExtractiveOptions{})}, nil, assistant.Options{
			Search: retrieve.Options{K: 4, BM25Weight: 0.6},
			Warn:   func(s string) { warns = append(warns, s) },
			Now:    func() time.Time { t := now; now = now.Add(step); return t },
		})
		if _, err := a.Ask(context.Background(), assistant.Request{Query: question}); err != nil {
			t.Fatal(err)
		}
		slow := len(warns) == 1 && strings.Contains(warns[0], "slow answer: 6.0 s")
		if (step > 5*time.Second) != slow {
			t.Errorf("answer of %v: warnings %q", step, warns)
		}
	}
}

// TestQuestionLengthLimit: one limit (2,000 characters) with one Japanese
// message, for the command line and the API alike.
func TestQuestionLengthLimit(t *testing.T) {
	a := newAssistant(t, t.TempDir())
	_, err := a.Ask(context.Background(), assistant.Request{Query: strings.Repeat("あ", assistant.MaxQuestionRunes+1)})
	if !errors.Is(err, assistant.ErrQuestionTooLong) || !strings.Contains(err.Error(), "2000 文字以内") {
		t.Errorf("err = %v", err)
	}
	if _, err := a.Ask(context.Background(), assistant.Request{Query: strings.Repeat("あ", assistant.MaxQuestionRunes)}); errors.Is(err, assistant.ErrQuestionTooLong) {
		t.Errorf("a question of exactly the limit refused: %v", err)
	}
}
