package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/llmtest"
)

// qaQuestions writes a small question set about the demo corpus.
func qaQuestions(t *testing.T) string {
	t.Helper()
	lines := `{"id":"Q1","kind":"md","question":"アカウントロックアウトの解除手順は？","source":"account_lockout.md","page":1,"article":null,"gold_span":"Unlock-ADAccount -Identity yamada.taro","key_facts":["Unlock-ADAccount"],"alt_spans":[]}
{"id":"U1","kind":"unanswerable","question":"社員食堂の今週のランチメニューは何円ですか？","source":"account_lockout.md","page":null,"article":null,"gold_span":"","key_facts":[],"alt_spans":[]}
`
	f := filepath.Join(t.TempDir(), "questions.jsonl")
	if err := os.WriteFile(f, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBenchQAOffline(t *testing.T) {
	ws := workspace(t, indexedFixture(t))
	out := filepath.Join(ws, "qa.csv")
	var reps []bench.QAReport
	text := mustRun(t, "bench", "qa", "--questions", qaQuestions(t), "--index", ".shirube", "--profiles", "default,deep", "--out", out, "--json")
	if err := json.Unmarshal([]byte(text), &reps); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(reps) != 2 || reps[0].Profile != "default" || reps[1].Profile != "deep" {
		t.Fatalf("reports %+v", reps)
	}
	for _, r := range reps {
		if r.FactAny != 1 || r.UnanswerableRefused != 1 || r.AnswerableRefused != 0 || r.CitedHit != 1 {
			t.Errorf("%s: %+v", r.Profile, r)
		}
	}
	header, rows, _, err := csvx.ReadFile(out)
	if err != nil || len(rows) != 4 || header[0] != "profile" || !strings.Contains(rows[0][len(header)-2], "Unlock-ADAccount") {
		t.Errorf("results CSV (%v): %q %q", err, header, rows)
	}
}

// TestBenchQAWithLLM: bench qa measures a model the same way, through
// openai-go against an OpenAI-compatible server.
func TestBenchQAWithLLM(t *testing.T) {
	workspace(t, indexedFixture(t))
	fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if rf, _ := r.Body["response_format"].(map[string]any); rf["type"] == "json_object" {
			return llmtest.Reply{Text: `{"claims":[]}`, Model: "gpt-4o-mini", PromptTokens: 10, CompletionTokens: 5}
		}
		return llmtest.Reply{Text: "Unlock-ADAccount -Identity yamada.taro を実行します [1]。", Model: "gpt-4o-mini", PromptTokens: 100, CompletionTokens: 20}
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	var reps []bench.QAReport
	text := mustRun(t, "bench", "qa", "--questions", qaQuestions(t), "--index", ".shirube", "--profiles", "default", "--generator", "llm", "--json")
	if err := json.Unmarshal([]byte(text), &reps); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(reps) != 1 || !strings.HasPrefix(reps[0].Generator, "llm") || reps[0].FactAny != 1 || reps[0].UnanswerableRefused != 1 {
		t.Errorf("reports %+v", reps)
	}
	if fake.Calls() == 0 {
		t.Error("the model was never called")
	}
}
