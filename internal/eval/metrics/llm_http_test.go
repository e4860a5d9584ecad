package metrics

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/llm"
)

// judgeServer is an httptest server speaking the OpenAI chat completions
// wire protocol: it answers every request with text as the assistant's
// message and records the request bodies.
type judgeServer struct {
	*httptest.Server
	t      *testing.T
	text   string
	mu     sync.Mutex
	bodies []map[string]any
}

func newJudgeServer(t *testing.T, text string) *judgeServer {
	t.Helper()
	s := &judgeServer{t: t, text: text}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *judgeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.t.Errorf("request %s %s; want POST /v1/chat/completions", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		s.t.Errorf("request body is not JSON: %v: %s", err, raw)
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	resp, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-judge", "object": "chat.completion", "created": 1735445655, "model": "gpt-test-judge",
		"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": s.text}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Write(resp)
}

func (s *judgeServer) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

func (s *judgeServer) judge(t *testing.T) LLMJudge {
	t.Helper()
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: s.URL + "/v1", MaxRetries: -1,
		Sleep: func(context.Context, time.Duration) error {
			t.Error("the client retried; no reply of the fake is retryable")
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return LLMJudge{LLM: c, Model: "gpt-test-judge"}
}

func messageOf(body map[string]any, role string) string {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] == role {
			s, _ := mm["content"].(string)
			return s
		}
	}
	return ""
}

var httpItems = []string{"監査ログは1年間保存する", "保存先はSIEM", "削除には承認が必要"}

const httpAnswer = "監査ログは1年間保存します [1]。削除には上長の承認が必要です [2]。なお、バックアップは毎日取得します。"

// TestLLMJudgeOverHTTP drives LLMJudge and EvaluateChecklist through the
// real OpenAI client against a fake chat completions server.
func TestLLMJudgeOverHTTP(t *testing.T) {
	// Items in shuffled order: the verdict is placed by "index".
	srv := newJudgeServer(t, `{"items":[{"index":3,"present":true},{"index":1,"present":true},{"index":2,"present":false}],
		"extra_points":["バックアップは毎日取得する"],"reason":"保存先が書かれていない"}`)
	in := ChecklistInput{Items: httpItems, Answer: httpAnswer}
	c, err := EvaluateChecklist(t.Context(), srv.judge(t), in)
	if err != nil {
		t.Fatal(err)
	}
	// TP=2 FN=1 FP=1: R=2/3, P=2/3, F1=4/6, Acc=2/4, Spec=0/1.
	if c.TP != 2 || c.FN != 1 || c.FP != 1 || c.TN != 0 {
		t.Errorf("TP,FP,FN,TN = %d,%d,%d,%d; want 2,1,1,0", c.TP, c.FP, c.FN, c.TN)
	}
	if got, want := checklistCells(c), []string{"0.6667", "0.6667", "0.6667", "0.5", "0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("R,P,F1,Acc,Spec = %q; want %q", got, want)
	}
	for _, want := range []string{"2/3 checklist items found", "missing: 保存先はSIEM", "1 extra point(s)", "保存先が書かれていない"} {
		if !strings.Contains(c.Reason, want) {
			t.Errorf("Reason %q lacks %q", c.Reason, want)
		}
	}

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests; want 1", len(reqs))
	}
	body := reqs[0]
	if rf, _ := body["response_format"].(map[string]any); rf == nil || rf["type"] != "json_object" {
		t.Errorf("response_format = %v; want {type: json_object}", body["response_format"])
	}
	if body["model"] != "gpt-test-judge" || body["temperature"] != 0.0 {
		t.Errorf("model %v, temperature %v", body["model"], body["temperature"])
	}
	if sys := messageOf(body, "system"); sys != judgeSystem {
		t.Errorf("system prompt = %q", sys)
	}
	wantUser := "Checklist:\n1. 監査ログは1年間保存する\n2. 保存先はSIEM\n3. 削除には承認が必要\n\nAnswer:\n" + httpAnswer
	if u := messageOf(body, "user"); u != wantUser {
		t.Errorf("user prompt = %q; want %q", u, wantUser)
	}
}

// TestLLMJudgeOverHTTPMalformed: a verdict that is not exactly the
// documented object is an error, never zero counts.
func TestLLMJudgeOverHTTPMalformed(t *testing.T) {
	tests := []struct{ name, reply, err string }{
		{"short", `{"items":[{"index":1,"present":true},{"index":2,"present":true}],"extra_points":[]}`, "2 verdicts for 3 items"},
		{"repeated index", `{"items":[{"index":1,"present":true},{"index":1,"present":false},{"index":2,"present":true}]}`, "repeated item index 1"},
		{"index out of range", `{"items":[{"index":1,"present":true},{"index":2,"present":true},{"index":4,"present":true}]}`, "bad or repeated item index 4"},
		{"present missing", `{"items":[{"index":1,"present":true},{"index":2},{"index":3,"present":false}]}`, `left "present" out for item 2`},
		{"wrong type", `{"items":[{"index":1,"present":"yes"},{"index":2,"present":true},{"index":3,"present":true}]}`, "invalid JSON"},
		{"no items", `{"verdict":"good"}`, "0 verdicts for 3 items"},
		{"prose", "回答はチェックリストの大半を満たしています。", "did not return a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newJudgeServer(t, tt.reply)
			c, err := EvaluateChecklist(t.Context(), srv.judge(t), ChecklistInput{Items: httpItems, Answer: httpAnswer})
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v; want one containing %q", err, tt.err)
			}
			if !reflect.DeepEqual(c, Checklist{}) {
				t.Errorf("a failed verdict produced metrics: %+v", c)
			}
			if n := len(srv.requests()); n != 1 {
				t.Errorf("%d requests; want 1", n)
			}
		})
	}
}
