package evalset

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/llm"
)

// anthropicJudge is an httptest server speaking the Anthropic Messages wire
// protocol. It answers the n-th request about a question (0-based) with
// replies[question][n] and records every request body.
type anthropicJudge struct {
	*httptest.Server
	t       *testing.T
	replies map[string][]string
	mu      sync.Mutex
	bodies  []map[string]any
	asked   map[string]int
}

func newAnthropicJudge(t *testing.T, replies map[string][]string) *anthropicJudge {
	t.Helper()
	s := &anthropicJudge{t: t, replies: replies, asked: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *anthropicJudge) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		s.t.Errorf("request %s %s; want POST /v1/messages", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if k := r.Header.Get("X-Api-Key"); k != "k" {
		s.t.Errorf("x-api-key = %q", k)
	}
	if r.Header.Get("Anthropic-Version") == "" {
		s.t.Error("no anthropic-version header")
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.t.Errorf("request body is not JSON: %v: %s", err, raw)
	}
	msgs := anthropicMessages(body)
	q := ""
	if len(msgs) > 0 {
		_, rest, _ := strings.Cut(msgs[0].Content, "【質問】\n")
		q, _, _ = strings.Cut(rest, "\n\n【回答】")
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	n := s.asked[q]
	s.asked[q]++
	s.mu.Unlock()
	rs := s.replies[q]
	if n >= len(rs) {
		s.t.Errorf("request %d about %q not expected", n+1, q)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	resp, _ := json.Marshal(map[string]any{
		"id": "msg_judge", "type": "message", "role": "assistant", "model": "claude-test-judge-20250101",
		"content":     []map[string]any{{"type": "text", "text": rs[n]}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 900, "output_tokens": 80},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Write(resp)
}

// requestsAbout returns the bodies of the requests about question q.
func (s *anthropicJudge) requestsAbout(q string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, b := range s.bodies {
		if m := anthropicMessages(b); len(m) > 0 && strings.Contains(m[0].Content, "【質問】\n"+q+"\n\n") {
			out = append(out, b)
		}
	}
	return out
}

// anthropicMessages reads the messages of a request body; content may be a
// string or a list of text blocks.
func anthropicMessages(body map[string]any) []llm.Message {
	var out []llm.Message
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		var text strings.Builder
		switch c := mm["content"].(type) {
		case string:
			text.WriteString(c)
		case []any:
			for _, part := range c {
				p, _ := part.(map[string]any)
				s, _ := p["text"].(string)
				text.WriteString(s)
			}
		}
		out = append(out, llm.Message{Role: role, Content: text.String()})
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
	// Every case expects two keywords of which the answer has one: the
	// keyword check (soft) fails and the category check passes, so the
	// deterministic score is 50 and a judge's average is not capped.
	kw := func(id, q string) Case {
		return Case{ID: id, Category: CategoryNormal, Query: q, ExpectedKeywords: []string{"答え", "未記載"}}
	}
	cases := []Case{kw("h1", qValid), kw("h2", qRetry), kw("h3", qBad), kw("h4", qProse)}
	ev := answer.Evidence{N: 1, File: "database/ネットワーク/vpn/page_001.md", Heading: "VPN > タイムアウト", Score: 0.85, Excerpt: "無操作が30分続くと切断される。"}
	asker := &fakeAsker{replies: map[string]assistant.Reply{}}
	for _, q := range []string{qValid, qRetry, qBad, qProse} {
		asker.replies[q] = assistant.Reply{Answer: q + "の答え [1]", Evidence: []answer.Evidence{ev}}
	}
	srv := newAnthropicJudge(t, map[string][]string{
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
	client, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", BaseURL: srv.URL, Model: "claude-test-judge", MaxRetries: -1,
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
		reqs := srv.requestsAbout(qValid)
		if len(reqs) != 1 {
			t.Fatalf("%d requests; want 1", len(reqs))
		}
		body := reqs[0]
		if body["model"] != "claude-test-judge" || body["temperature"] != 0.0 {
			t.Errorf("model %v, temperature %v", body["model"], body["temperature"])
		}
		// Anthropic has no JSON mode: the client asks for JSON in the system prompt.
		sys, _ := json.Marshal(body["system"])
		if !strings.Contains(string(sys), "single JSON object") {
			t.Errorf("system %s does not ask for JSON", sys)
		}
		msgs := anthropicMessages(body)
		if len(msgs) != 1 || msgs[0].Role != llm.RoleUser || msgs[0].Content != JudgePrompt(qValid, qValid+"の答え [1]", []answer.Evidence{ev}) {
			t.Errorf("messages %+v; want the judge prompt", msgs)
		}
		if !strings.Contains(msgs[0].Content, "[1] database/ネットワーク/vpn/page_001.md > VPN > タイムアウト (スコア: 0.85)\n無操作が30分続くと切断される。") {
			t.Errorf("prompt lacks the citation:\n%s", msgs[0].Content)
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
		reqs := srv.requestsAbout(qRetry)
		if len(reqs) != 2 {
			t.Fatalf("%d requests; want 2", len(reqs))
		}
		msgs := anthropicMessages(reqs[1])
		// The client hands Judge the extracted object, and Judge shows it
		// back to the model.
		if len(msgs) != 3 || msgs[1].Role != llm.RoleAssistant || msgs[1].Content != `{"grounding": 85, "accuracy": 120}` ||
			msgs[2].Role != llm.RoleUser || msgs[2].Content != judgeRetryMessage {
			t.Errorf("retry conversation %+v", msgs)
		}
		if first := anthropicMessages(reqs[0]); msgs[0] != first[0] {
			t.Error("the retry does not repeat the original prompt")
		}
	})

	t.Run("malformed twice: deterministic score kept", func(t *testing.T) {
		c := res.Cases[2]
		if c.Judge != nil || !strings.Contains(c.JudgeError, "judge reply unreadable twice") || !strings.Contains(c.JudgeError, ErrJudgeMalformed.Error()) {
			t.Errorf("judge %+v, error %q; want the unreadable-twice error", c.Judge, c.JudgeError)
		}
		if strings.Contains(c.JudgeError, "\n") {
			t.Errorf("judge error is not one line: %q", c.JudgeError)
		}
		if c.Score != 50 || c.Passed {
			t.Errorf("score %v passed %t; want the deterministic 50, failed", c.Score, c.Passed)
		}
		if n := len(srv.requestsAbout(qBad)); n != 2 {
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
		t.Logf("judge requests for a prose reply: %d (Judge's retry needs a client answer to re-ask about)", len(srv.requestsAbout(qProse)))
	})

	if res.Total != 4 || res.PassCount != 2 || res.Verdict != "FAIL" {
		t.Errorf("total %d, passed %d, %s; want 4, 2, FAIL", res.Total, res.PassCount, res.Verdict)
	}
}
