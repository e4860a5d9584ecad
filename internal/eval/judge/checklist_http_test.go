package judge

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/eval/metrics"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
)

// newJudgeServer starts a fake OpenAI chat completions server that answers
// every request with text as the assistant's message.
func newJudgeServer(t *testing.T, text string) *llmtest.Server {
	t.Helper()
	return llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: text, Model: "gpt-test-judge", PromptTokens: 200, CompletionTokens: 40}
	})
}

// httpJudge is a ChecklistLLM using the real OpenAI client against srv.
func httpJudge(t *testing.T, srv *llmtest.Server) ChecklistLLM {
	t.Helper()
	c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: srv.BaseURL(), MaxRetries: -1,
		Sleep: func(context.Context, time.Duration) error {
			t.Error("the client retried; no reply of the fake is retryable")
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return ChecklistLLM{LLM: c, Model: "gpt-test-judge"}
}

var httpItems = []string{"監査ログは1年間保存する", "保存先はSIEM", "削除には承認が必要"}

const httpAnswer = "監査ログは1年間保存します [1]。削除には上長の承認が必要です [2]。なお、バックアップは毎日取得します。"

// TestChecklistLLMOverHTTP drives ChecklistLLM and EvaluateChecklist through the
// real OpenAI client against a fake chat completions server.
func TestChecklistLLMOverHTTP(t *testing.T) {
	// Items in shuffled order: the verdict is placed by "index".
	srv := newJudgeServer(t, `{"items":[{"index":3,"present":true},{"index":1,"present":true},{"index":2,"present":false}],
		"extra_points":["バックアップは毎日取得する"],"reason":"保存先が書かれていない"}`)
	in := metrics.ChecklistInput{Items: httpItems, Answer: httpAnswer}
	c, err := metrics.EvaluateChecklist(t.Context(), httpJudge(t, srv), in)
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

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests; want 1", len(reqs))
	}
	req := reqs[0]
	body := req.Body
	if rf, _ := body["response_format"].(map[string]any); rf == nil || rf["type"] != "json_object" {
		t.Errorf("response_format = %v; want {type: json_object}", body["response_format"])
	}
	if req.Model != "gpt-test-judge" || body["temperature"] != 0.0 {
		t.Errorf("model %v, temperature %v", req.Model, body["temperature"])
	}
	if req.System != checklistSystem {
		t.Errorf("system prompt = %q", req.System)
	}
	wantUser := "Checklist:\n1. 監査ログは1年間保存する\n2. 保存先はSIEM\n3. 削除には承認が必要\n\nAnswer:\n" + httpAnswer
	if req.User != wantUser {
		t.Errorf("user prompt = %q; want %q", req.User, wantUser)
	}
}

// TestChecklistLLMOverHTTPMalformed: a verdict that is not exactly the
// documented object is asked for once more; twice malformed is an error,
// never zero counts.
func TestChecklistLLMOverHTTPMalformed(t *testing.T) {
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
			c, err := metrics.EvaluateChecklist(t.Context(), httpJudge(t, srv), metrics.ChecklistInput{Items: httpItems, Answer: httpAnswer})
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v; want one containing %q", err, tt.err)
			}
			if !reflect.DeepEqual(c, metrics.Checklist{}) {
				t.Errorf("a failed verdict produced metrics: %+v", c)
			}
			if n := srv.Calls(); n != 2 {
				t.Errorf("%d requests; want 2 (one retry)", n)
			}
			if !strings.Contains(err.Error(), "unusable twice") {
				t.Errorf("err = %v; want it to say the reply was unusable twice", err)
			}
		})
	}
}

// TestChecklistLLMOverHTTPRetry: a malformed verdict, then a valid one: the
// retry shows the model its reply and what was wrong, and the second
// verdict counts.
func TestChecklistLLMOverHTTPRetry(t *testing.T) {
	replies := []string{
		`{"items":[{"index":1,"present":true}],"extra_points":[]}`,
		`{"items":[{"index":1,"present":true},{"index":2,"present":false},{"index":3,"present":true}],"extra_points":[],"reason":"ok"}`,
	}
	srv := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: replies[min(r.Calls, len(replies))-1]}
	})
	c, err := metrics.EvaluateChecklist(t.Context(), httpJudge(t, srv), metrics.ChecklistInput{Items: httpItems, Answer: httpAnswer})
	if err != nil {
		t.Fatal(err)
	}
	if c.TP != 2 || c.FN != 1 {
		t.Errorf("TP %d FN %d; want 2, 1 from the second verdict", c.TP, c.FN)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	// OpenAI carries the system prompt as the first message.
	if len(msgs) != 4 || msgs[0].Role != "system" || msgs[2].Role != "assistant" || msgs[2].Text != replies[0] ||
		!strings.Contains(msgs[3].Text, "1 verdicts for 3 items") || !strings.Contains(msgs[3].Text, "indices 1..3") {
		t.Errorf("retry conversation %+v", msgs)
	}
}

// checklistCells are the ratio cells of a checklist result, in the order
// recall, precision, F1, accuracy, specificity.
func checklistCells(c metrics.Checklist) []string {
	return []string{c.Recall.Cell(), c.Precision.Cell(), c.F1.Cell(), c.Accuracy.Cell(), c.Specificity.Cell()}
}
