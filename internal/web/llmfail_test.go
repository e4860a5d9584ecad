package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
	"github.com/shirube/shirube/internal/retrieve"
)

// llmServer is a server answering with the real OpenAI SDK against fake,
// falling back to the extractive generator when fallback is set.
func llmServer(t *testing.T, fake *llmtest.Server, fallback bool, logs string, configure func(*Options)) *fixture {
	t.Helper()
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: fake.BaseURL(),
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	opt := assistant.Options{Search: retrieve.Options{K: 4, BM25Weight: 0.6}}
	if fallback {
		opt.Fallback = extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}
	}
	gen := answer.Conversational{LLM: answer.NewLLM(c, c, answer.LLMOptions{Tokenizer: a, LexicalOnly: true})}
	asst := assistant.New(openSearcher(t, fixtureIndex), gen, auditlog.Open(logs, auditlog.Options{}), opt)
	o := Options{Assistant: asst, Tokenizer: a, StateDir: logs}
	if configure != nil {
		configure(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return &fixture{srv: srv, ts: ts, asst: asst, logs: logs}
}

const askBody = `{"question": "バックアップからの復旧手順は？"}`

// TestAPILLMDown: with the model failing after its retries, POST /api/ask
// answers 200 extractively with the notice and llm_unavailable, as JSON
// and as a stream; without a fallback the error is Japanese and shows no
// internals.
func TestAPILLMDown(t *testing.T) {
	fake := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 500} })
	f := llmServer(t, fake, true, t.TempDir(), nil)
	rep := f.askJSON(t, askBody)
	if !rep.LLMUnavailable || rep.Outcome != "llm_unavailable" || !strings.Contains(rep.Notice, "抜粋") || !strings.HasPrefix(rep.Answer, rep.Notice) || len(rep.Citations) == 0 {
		t.Errorf("JSON reply: %+v", rep.Reply)
	}
	resp, b := f.do(t, "POST", "/api/ask", askBody, map[string]string{"Accept": "text/event-stream"})
	evs := readSSE(t, strings.NewReader(string(b)))
	last := evs[len(evs)-1]
	if resp.StatusCode != 200 || last.name != "done" || !strings.Contains(last.data, `"llm_unavailable":true`) {
		t.Errorf("stream ends with %s %s", last.name, last.data)
	}

	bare := llmServer(t, fake, false, t.TempDir(), nil)
	resp, b = bare.do(t, "POST", "/api/ask", askBody, nil)
	var e apiError
	_ = json.Unmarshal(b, &e)
	if resp.StatusCode != http.StatusInternalServerError || e.Code != "answer_failed" || !strings.Contains(e.Error, "回答を作成できませんでした") {
		t.Errorf("no fallback: %d %s", resp.StatusCode, b)
	}
	for _, leak := range []string{"http", "127.0.0.1", "openai", "request for model"} {
		if strings.Contains(e.Error, leak) {
			t.Errorf("error shows internals %q: %s", leak, e.Error)
		}
	}
	if es, _ := auditlog.ReadAll(context.Background(), bare.logs); len(es) != 1 || es[0].Outcome != "error" {
		t.Errorf("failed question not audited: %+v", es)
	}
}

// TestAPIStreamCutOff: a model stream cut off mid-answer reaches the page
// marked incomplete (the done event), and the audit log says so.
func TestAPIStreamCutOff(t *testing.T) {
	fake := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "バックアップからの復旧は次の手順で行います [1]。 1. 対象を確認する。", Chunks: 6, CutAfter: 3}
	})
	f := llmServer(t, fake, true, t.TempDir(), nil)
	_, b := f.do(t, "POST", "/api/ask", askBody, map[string]string{"Accept": "text/event-stream"})
	evs := readSSE(t, strings.NewReader(string(b)))
	last := evs[len(evs)-1]
	var done AskResponse
	if err := json.Unmarshal([]byte(last.data), &done); err != nil || last.name != "done" {
		t.Fatalf("last event %s %s", last.name, last.data)
	}
	if !done.Incomplete || done.Outcome != "incomplete" || !strings.HasPrefix(done.Answer, assistant.NoticeIncomplete) {
		t.Errorf("done: %+v", done.Reply)
	}
	if es, _ := auditlog.ReadAll(context.Background(), f.logs); len(es) != 1 || !es[0].Incomplete {
		t.Errorf("audit log: %+v", es)
	}
}

// TestOpenAIStreamCutOff: the OpenAI-compatible stream of an answer whose
// model stream was cut off ends with finish_reason "length" and the
// incomplete notice in the text, as /api/ask marks it.
func TestOpenAIStreamCutOff(t *testing.T) {
	fake := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "バックアップからの復旧は次の手順で行います [1]。 1. 対象を確認する。", Chunks: 6, CutAfter: 3}
	})
	f := llmServer(t, fake, true, t.TempDir(), nil)
	const body = `{"model": "shirube", "stream": %s, "messages": [{"role": "user", "content": "バックアップからの復旧手順は？"}]}`
	_, b := f.do(t, "POST", "/v1/chat/completions", fmt.Sprintf(body, "true"), nil)
	var text strings.Builder
	finish := ""
	for _, ev := range readSSE(t, strings.NewReader(string(b))) {
		var c chatResponse
		if ev.data == "[DONE]" || json.Unmarshal([]byte(ev.data), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		if d := c.Choices[0].Delta; d != nil {
			text.WriteString(d.Content)
		}
		if fr := c.Choices[0].FinishReason; fr != nil {
			finish = *fr
		}
	}
	if finish != "length" || !strings.Contains(text.String(), assistant.NoticeIncomplete) {
		t.Errorf("stream: finish_reason %q, text %q; want length and the incomplete notice", finish, text.String())
	}
}

// TestAPITimeoutAudited: the server's 504 (answer time limit) still writes
// the question's audit line, with outcome timeout.
func TestAPITimeoutAudited(t *testing.T) {
	fake := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} })
	f := llmServer(t, fake, true, t.TempDir(), func(o *Options) { o.AskTimeout = 300 * time.Millisecond })
	resp, b := f.do(t, "POST", "/api/ask", askBody, nil)
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("%d %s, want 504", resp.StatusCode, b)
	}
	es, _ := auditlog.ReadAll(context.Background(), f.logs)
	if len(es) != 1 || es[0].Outcome != auditlog.OutcomeTimeout || es[0].Query != "バックアップからの復旧手順は？" {
		t.Errorf("audit log: %+v", es)
	}
}

// TestAPIAuditFailureCounted: an audit line that cannot be written does
// not fail the answer, but shows in /metrics.
func TestAPIAuditFailureCounted(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	if err := os.WriteFile(logs, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := llmtest.OpenAI(t, llmtest.Text("復旧対象を確認します [1]。"))
	f := llmServer(t, fake, true, logs, nil)
	f.askJSON(t, askBody)
	_, b := f.do(t, "GET", "/metrics", "", nil)
	if !strings.Contains(string(b), "shirube_audit_log_errors_total 1") {
		t.Errorf("metric missing:\n%s", grepLines(string(b), "audit"))
	}
}

func grepLines(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAPIClientDisconnectAudited: a client that closes the event stream
// mid-answer cancels it, and the question is still in the audit log with
// outcome cancelled.
func TestAPIClientDisconnectAudited(t *testing.T) {
	fake := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: strings.Repeat("復旧手順を説明します。", 40), Chunks: 40, ChunkDelay: 50 * time.Millisecond}
	})
	f := llmServer(t, fake, true, t.TempDir(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", f.ts.URL+"/api/ask", strings.NewReader(askBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	for {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended before a delta: %v", err)
		}
		if strings.Contains(string(buf[:n]), "event: delta") {
			break
		}
	}
	cancel()
	resp.Body.Close()
	// The handler writes the line when the cancelled answer returns.
	var es []auditlog.Entry
	for range 200 {
		if es, _ = auditlog.ReadAll(context.Background(), f.logs); len(es) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(es) != 1 || es[0].Outcome != auditlog.OutcomeCancelled {
		t.Errorf("audit log: %+v", es)
	}
}
