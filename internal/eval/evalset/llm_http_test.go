package evalset

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/eval/judge"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// judgeQuestion returns the question a judge request is about: the text
// between 【質問】 and 【回答】 in its first message.
func judgeQuestion(r llmtest.Request) string {
	if len(r.Messages) == 0 {
		return ""
	}
	_, rest, _ := strings.Cut(r.Messages[0].Text, "【質問】\n")
	q, _, _ := strings.Cut(rest, "\n\n【回答】")
	return q
}

// anthropicJudge starts a fake Anthropic Messages API that answers the n-th
// request about a question (0-based) with replies[question][n].
func anthropicJudge(t *testing.T, replies map[string][]string) *llmtest.Server {
	t.Helper()
	var mu sync.Mutex
	asked := map[string]int{}
	return llmtest.Anthropic(t, func(r llmtest.Request) llmtest.Reply {
		if k := r.Header.Get("X-Api-Key"); k != "k" {
			t.Errorf("x-api-key = %q", k)
		}
		if r.Header.Get("Anthropic-Version") == "" {
			t.Error("no anthropic-version header")
		}
		q := judgeQuestion(r)
		mu.Lock()
		n := asked[q]
		asked[q]++
		mu.Unlock()
		rs := replies[q]
		if n >= len(rs) {
			t.Errorf("request %d about %q not expected", n+1, q)
			return llmtest.Reply{Status: http.StatusInternalServerError}
		}
		return llmtest.Reply{Text: rs[n], Model: "claude-test-judge-20250101", PromptTokens: 900, CompletionTokens: 80}
	})
}

// requestsAbout returns the requests srv received about question q.
func requestsAbout(srv *llmtest.Server, q string) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if len(r.Messages) > 0 && strings.Contains(r.Messages[0].Text, "【質問】\n"+q+"\n\n") {
			out = append(out, r)
		}
	}
	return out
}

// TestRunJudgeOverHTTP runs the 6-axis judge through the real Anthropic
// client against a fake Messages API.
func TestRunJudgeOverHTTP(t *testing.T) {
	const (
		qValid = "VPNのタイムアウトは？"
		qRetry = "ログの保存期間は？"
		qBad   = "パスワードの最小文字数は？"
		qProse = "MFAの対象は？"
	)
	// Every case expects two citations of which the answer has one: the
	// citation check (soft) fails and the category check passes, so the
	// deterministic score is 50 and a judge's average is neither capped
	// nor lowered (only missing keywords lower it).
	kw := func(id, q string) Case {
		return Case{ID: id, Category: CategoryNormal, Query: q, ExpectedCitations: []string{"ネットワーク/vpn.md", "runbooks/absent.md"}}
	}
	cases := []Case{kw("h1", qValid), kw("h2", qRetry), kw("h3", qBad), kw("h4", qProse)}
	ev := answer.Evidence{N: 1, File: "database/ネットワーク/vpn/page_001.md", Heading: "VPN > タイムアウト", Score: 0.85, Excerpt: "無操作が30分続くと切断される。"}
	asker := &fakeAsker{replies: map[string]assistant.Reply{}}
	for _, q := range []string{qValid, qRetry, qBad, qProse} {
		asker.replies[q] = assistant.Reply{Answer: q + "の答え [1]", Evidence: []answer.Evidence{ev}}
	}
	srv := anthropicJudge(t, map[string][]string{
		// The model's own average (99) is ignored: (90+80+70+100+60+85)/6 = 80.8.
		qValid: {"```json\n" + `{"grounding": 90, "accuracy": 80, "completeness": 70, "safety": 100, "citation": 60, "conciseness": 85, "average": 99, "reasoning": "引用元に基づく"}` + "\n```"},
		// A JSON object without usable scores, then a valid one.
		qRetry: {
			`評価します。{"grounding": 85, "accuracy": 120}`,
			`{"grounding": 70, "accuracy": 70, "completeness": 70, "safety": 70, "citation": 70, "conciseness": 70, "average": 70, "reasoning": "再評価"}`,
		},
		qBad:   {`{"score": 75}`, `{"grounding": "高い", "accuracy": 80, "completeness": 80, "safety": 80, "citation": 80, "conciseness": 80}`},
		qProse: {"申し訳ありませんが、評価できません。", "やはり評価できません。"},
	})
	client, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", BaseURL: srv.BaseURL(), Model: "claude-test-judge", MaxRetries: -1,
		Sleep: func(context.Context, time.Duration) error {
			t.Error("the client retried; no reply of the fake is retryable")
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), Options{Dataset: writeDataset(t, Dataset{Cases: cases}), Asker: asker, Judge: client, OutDir: t.TempDir(), Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Judge != "claude-test-judge" {
		t.Errorf("judge name %q; want the client's model", res.Judge)
	}
	if len(res.Cases) != 4 {
		t.Fatalf("%d cases; want 4", len(res.Cases))
	}
	for _, c := range res.Cases {
		if c.DeterministicScore != 50 {
			t.Errorf("case %s deterministic score %v; want 50", c.ID, c.DeterministicScore)
		}
	}

	t.Run("valid reply", func(t *testing.T) {
		c := res.Cases[0]
		want := JudgeScores{Grounding: 90, Accuracy: 80, Completeness: 70, Safety: 100, Citation: 60, Conciseness: 85,
			Average: 80.8, Reasoning: "引用元に基づく", Model: "claude-test-judge-20250101"}
		if c.Judge == nil || *c.Judge != want || c.JudgeError != "" {
			t.Fatalf("judge %+v, error %q; want %+v", c.Judge, c.JudgeError, want)
		}
		if c.Score != 80.8 || !c.Passed {
			t.Errorf("score %v passed %t; want 80.8 passed", c.Score, c.Passed)
		}
		reqs := requestsAbout(srv, qValid)
		if len(reqs) != 1 {
			t.Fatalf("%d requests; want 1", len(reqs))
		}
		req := reqs[0]
		if req.Model != "claude-test-judge" || req.Body["temperature"] != 0.0 {
			t.Errorf("model %v, temperature %v", req.Model, req.Body["temperature"])
		}
		// Anthropic has no JSON mode: the client asks for JSON in the system prompt.
		if !strings.Contains(req.System, "single JSON object") {
			t.Errorf("system %q does not ask for JSON", req.System)
		}
		msgs := req.Messages
		if len(msgs) != 1 || msgs[0].Role != llm.RoleUser || msgs[0].Text != judge.RubricPrompt(qValid, qValid+"の答え [1]", []answer.Evidence{ev}) {
			t.Errorf("messages %+v; want the judge prompt", msgs)
		}
		if !strings.Contains(msgs[0].Text, "[1] database/ネットワーク/vpn/page_001.md > VPN > タイムアウト (スコア: 0.85)\n無操作が30分続くと切断される。") {
			t.Errorf("prompt lacks the citation:\n%s", msgs[0].Text)
		}
	})

	t.Run("malformed then valid: retried once", func(t *testing.T) {
		c := res.Cases[1]
		if c.Judge == nil || c.Judge.Average != 70 || c.Judge.Reasoning != "再評価" || c.JudgeError != "" {
			t.Fatalf("judge %+v, error %q; want average 70", c.Judge, c.JudgeError)
		}
		if c.Score != 70 || !c.Passed {
			t.Errorf("score %v passed %t; want 70 passed", c.Score, c.Passed)
		}
		reqs := requestsAbout(srv, qRetry)
		if len(reqs) != 2 {
			t.Fatalf("%d requests; want 2", len(reqs))
		}
		msgs := reqs[1].Messages
		// The client hands Judge the extracted object, and Judge shows it
		// back to the model.
		if len(msgs) != 3 || msgs[1].Role != llm.RoleAssistant || msgs[1].Text != `{"grounding": 85, "accuracy": 120}` ||
			msgs[2].Role != llm.RoleUser || msgs[2].Text != judge.RubricRetryMessage {
			t.Errorf("retry conversation %+v", msgs)
		}
		if first := reqs[0].Messages; len(msgs) == 0 || len(first) == 0 || msgs[0] != first[0] {
			t.Error("the retry does not repeat the original prompt")
		}
	})

	t.Run("malformed twice: deterministic score kept", func(t *testing.T) {
		c := res.Cases[2]
		if c.Judge != nil || !strings.Contains(c.JudgeError, "judge reply unreadable twice") || !strings.Contains(c.JudgeError, judge.ErrRubricMalformed.Error()) {
			t.Errorf("judge %+v, error %q; want the unreadable-twice error", c.Judge, c.JudgeError)
		}
		if strings.Contains(c.JudgeError, "\n") {
			t.Errorf("judge error is not one line: %q", c.JudgeError)
		}
		if c.Score != 50 || c.Passed {
			t.Errorf("score %v passed %t; want the deterministic 50, failed", c.Score, c.Passed)
		}
		if n := len(requestsAbout(srv, qBad)); n != 2 {
			t.Errorf("%d requests; want 2", n)
		}
	})

	t.Run("prose: deterministic score kept", func(t *testing.T) {
		// A reply with no JSON object at all fails in the client (JSON
		// extraction), so whether or not Judge asks again, the case keeps
		// its deterministic score and records why.
		c := res.Cases[3]
		if c.Judge != nil || !strings.Contains(c.JudgeError, "did not return a JSON object") {
			t.Errorf("judge %+v, error %q; want the client's not-JSON error", c.Judge, c.JudgeError)
		}
		if c.Score != 50 || c.Passed {
			t.Errorf("score %v passed %t; want the deterministic 50, failed", c.Score, c.Passed)
		}
		t.Logf("judge requests for a prose reply: %d (Judge's retry needs a client answer to re-ask about)", len(requestsAbout(srv, qProse)))
	})

	// Two judge failures make the run an error, whatever the pass rate.
	if res.Total != 4 || res.PassCount != 2 || res.Verdict != VerdictError || res.Passed {
		t.Errorf("total %d, passed %d, %s (passed %t); want 4, 2, ERROR", res.Total, res.PassCount, res.Verdict, res.Passed)
	}
	if res.Judged != 2 || res.JudgeFailed != 2 || res.Fallback != 2 {
		t.Errorf("judged %d, failed %d, fallback %d; want 2, 2, 2", res.Judged, res.JudgeFailed, res.Fallback)
	}
	for i, want := range []string{"claude-test-judge-20250101", "claude-test-judge-20250101", JudgeFallback, JudgeFallback} {
		if got := res.Cases[i].ScoredBy; got != want {
			t.Errorf("case %s scored by %q; want %q", res.Cases[i].ID, got, want)
		}
	}
}

// TestRunJudgeDownIsAnError is the audit's run: every judge call fails
// (HTTP 500 through the real OpenAI client) and every answer is the same
// sentence that the deterministic checks alone would pass. Today's run
// must not say PASS: each case is an error scored by the fallback, the
// counts say so and the verdict is ERROR.
func TestRunJudgeDownIsAnError(t *testing.T) {
	srv := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: http.StatusInternalServerError, ErrorMessage: "upstream down"}
	})
	client, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.BaseURL(), Model: "gpt-judge", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	asker := &fakeAsker{replies: map[string]assistant.Reply{}}
	for i := range 4 {
		q := fmt.Sprintf("質問%d", i)
		cases = append(cases, Case{ID: fmt.Sprintf("c%d", i), Category: CategoryNormal, Query: q})
		asker.replies[q] = assistant.Reply{Answer: "手順は次のとおりです。"}
	}
	var progress bytes.Buffer
	res, err := Run(t.Context(), Options{Dataset: writeDataset(t, Dataset{Cases: cases}), Asker: asker, Judge: client,
		OutDir: t.TempDir(), Now: fixedNow, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != VerdictError || res.Passed || res.PassCount != 0 {
		t.Errorf("verdict %s, passed %t, %d cases passed; want ERROR, false, 0", res.Verdict, res.Passed, res.PassCount)
	}
	if res.Judged != 0 || res.JudgeFailed != 4 || res.Fallback != 4 {
		t.Errorf("judged %d, failed %d, fallback %d; want 0, 4, 4", res.Judged, res.JudgeFailed, res.Fallback)
	}
	for _, c := range res.Cases {
		if c.ScoredBy != JudgeFallback || c.Passed || c.JudgeError == "" || c.DeterministicScore != 100 {
			t.Errorf("case %s: scored by %q, passed %t, judge error %q, deterministic %v", c.ID, c.ScoredBy, c.Passed, c.JudgeError, c.DeterministicScore)
		}
	}
	if !strings.Contains(progress.String(), "0 judged, 4 failed, 4 scored by the deterministic fallback") {
		t.Errorf("progress does not count the judge failures:\n%s", progress.String())
	}
	if srv.Calls() != 4 {
		t.Errorf("%d judge calls; want 4 (one per case, no retry of a failed call)", srv.Calls())
	}
}
