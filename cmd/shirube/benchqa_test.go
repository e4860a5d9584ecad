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

// TestBenchQAPathSources: sources given as paths find their gold documents
// — two documents of one stem in different folders among them — and the
// text output breaks the scores down by format and question type; the CSV
// holds the gate's decision per question.
func TestBenchQAPathSources(t *testing.T) {
	offlineEnv(t)
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"data/ops/guide.md": "# 障害対応ガイド\n\n## ポストモーテム\n\n重大インシデントのポストモーテム会議は、SEV-1の場合は3日以内に開催します。議事録は共有フォルダに保存します。\n",
		"data/dev/guide.md": "# 開発ガイド\n\n## コードレビュー\n\nプルリクエストは、レビュアー2人以上の承認を得てからマージします。承認の前にテストがすべて通っている必要があります。\n",
		"data/dev/setup.md": "# 開発環境\n\n## セットアップ\n\n開発用のコンテナは docker compose up で起動します。\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	questions := `{"id":"O1","kind":"md","qtype":"date","question":"ポストモーテム会議はSEV-1の場合は何日以内に開催しますか？","source":"ops/guide.md","page":null,"article":null,"gold_span":"SEV-1の場合は3日以内に開催します","key_facts":["3日以内"],"alt_spans":[]}
{"id":"D1","kind":"md","qtype":"quantity","question":"プルリクエストをマージするにはレビュアー何人以上の承認が必要ですか？","source":"dev/guide.md","page":null,"article":null,"gold_span":"レビュアー2人以上の承認を得てからマージします","key_facts":["2人以上"],"alt_spans":[]}
{"id":"U1","kind":"unanswerable","qtype":"unanswerable","question":"社員食堂の今週のランチメニューは何円ですか？","source":"ops/guide.md","page":null,"article":null,"gold_span":"","key_facts":[],"alt_spans":[]}
`
	if err := os.WriteFile("q.jsonl", []byte(questions), 0o644); err != nil {
		t.Fatal(err)
	}
	var reps []bench.QAReport
	text := mustRun(t, "bench", "qa", "--questions", "q.jsonl", "--data", "data", "--index", "idx", "--profiles", "default", "--out", "qa.csv", "--json")
	if err := json.Unmarshal([]byte(text), &reps); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if r := reps[0]; r.Hit1 != 1 || r.CitedHit != 1 || r.UnanswerableRefused != 1 {
		t.Errorf("gold documents by path: hit@1 %v, cited %v, unanswerable refused %v", r.Hit1, r.CitedHit, r.UnanswerableRefused)
	}
	header, rows, _, err := csvx.ReadFile("qa.csv")
	if err != nil || len(rows) != 3 {
		t.Fatalf("results CSV (%v): %q", err, rows)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, row := range rows {
		decision, reason := row[col["decision"]], row[col["refusal_reason"]]
		want := "answer"
		if row[col["kind"]] == "unanswerable" {
			want = "refuse"
		}
		if decision != want || (want == "refuse") != (reason != "") || row[col["evidence_score"]] == "" {
			t.Errorf("%s: decision %q, reason %q, evidence %q", row[col["id"]], decision, reason, row[col["evidence_score"]])
		}
	}
	text = mustRun(t, "bench", "qa", "--questions", "q.jsonl", "--index", "idx/index", "--profiles", "default,deep")
	for _, want := range []string{"by format", "by qtype", "quantity", "unanswerable", "refusals by the gate's reason"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}
