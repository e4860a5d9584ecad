package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/llmtest"
)

const tinyCases = `{"version": "0.1", "cases": [
 {"id": "c1", "question": "アカウントロックアウトのしきい値は何回ですか", "expected_keywords": ["10回"]},
 {"id": "c2", "question": "重大度の判定基準は何ですか", "expected_keywords": ["重大度"]}]}`

// testDiffEvalAllSkipped: when no answer of a configuration can be
// evaluated — here every question is outside the corpus, so every answer
// is the insufficient-evidence refusal (SKIPPED); an LLM that is down with
// no fallback or an index of other documents end the same way — diff-eval
// compared nothing and must exit non-zero, saying why on stderr.
func testDiffEvalAllSkipped(t *testing.T) {
	os.WriteFile("cases.json", []byte(`{"version": "0.1", "cases": [
 {"id": "q1", "question": "量子コンピュータの冷却装置の保守手順を教えてください", "expected_keywords": ["冷却"]},
 {"id": "q2", "question": "量子コンピュータの冷却装置の保守手順を教えてください", "expected_keywords": ["保守"]}]}`), 0o644)
	out, _, err := run(t, "", "diff-eval", "--cases", "cases.json", "--a", ".shirube", "--b", ".shirube", "--runs", "1", "--out-dir", "cmp", "--logs", "logs")
	var ec exitCode
	if !errors.As(err, &ec) || ec.code == 0 || !strings.Contains(ec.msg, "was SKIPPED") || !strings.Contains(ec.msg, "nothing was compared") {
		t.Fatalf("diff-eval with every case skipped: err %v; want a non-zero exit saying every case was SKIPPED\n%s", err, out)
	}
}

func testDiffEval(t *testing.T) {
	os.WriteFile("cases.json", []byte(tinyCases), 0o644)

	// Two existing indexes (the same one twice): every metric is equal.
	out := mustRun(t, "diff-eval", "--cases", "cases.json", "--a", ".shirube", "--b", ".shirube", "--runs", "2", "--out-dir", "cmp", "--logs", "logs")
	if !regexp.MustCompile(`(?m)^evidence_hit_rate\s+\S+\s+\S+\s+\+0\.0000\s+=`).MatchString(out) {
		t.Errorf("identical configurations differ:\n%s", out)
	}

	// Default: the data folder indexed twice, HTML as text and as Markdown.
	out = mustRun(t, "diff-eval", "--cases", "cases.json", "--data", "data", "--runs", "1", "--out-dir", "cmp2", "--logs", "logs", "--work", "work")
	for _, want := range []string{"html-text: PASS", "markdown: PASS", "report: cmp2/diff_eval_"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff-eval output lacks %q:\n%s", want, out)
		}
	}
	for _, mode := range []string{"text", "markdown"} {
		m, err := index.ReadMeta(filepath.Join("work", mode, "index"))
		if err != nil || m.HTMLMode != mode {
			t.Errorf("%s index: HTML mode %q, err %v", mode, m.HTMLMode, err)
		}
	}
	for _, ext := range []string{".json", ".md", ".png"} {
		if m, _ := filepath.Glob("cmp2/diff_eval_*" + ext); len(m) != 1 {
			t.Errorf("report files *%s: %v", ext, m)
		}
	}

	// A case file whose corpus is missing needs --data.
	os.WriteFile("nocorpus.json", []byte(strings.Replace(tinyCases, `"version": "0.1",`, `"version": "0.1", "corpus": "no/such/dir",`, 1)), 0o644)
	_, _, err := run(t, "", "diff-eval", "--cases", "nocorpus.json")
	if err == nil || !strings.Contains(err.Error(), "--data") {
		t.Errorf("missing corpus: %v", err)
	}
}

// testDiffEvalModelDown: diff-eval with an LLM configured whose every call
// fails. The assistant falls back to extractive answers, which contain the
// keywords; scoring them would credit the model with text it never wrote
// (issue 22: a FAIL 2/2 once flipped to PASS 2/2 this way). Every run is
// SKIPPED, naming the unused model, and the command exits non-zero.
func testDiffEvalModelDown(t *testing.T) {
	fake := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 500, RetryAfter: "0", ErrorMessage: "model overloaded"}
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	os.WriteFile("cases.json", []byte(tinyCases), 0o644)
	out, _, err := run(t, "", "diff-eval", "--cases", "cases.json", "--a", ".shirube", "--b", ".shirube", "--runs", "1", "--out-dir", "cmp", "--logs", "logs")
	var ec exitCode
	if !errors.As(err, &ec) || ec.code == 0 || !strings.Contains(ec.msg, "requested model was not used") {
		t.Errorf("diff-eval with the model down: err %v; want a non-zero exit naming the unused model\n%s", err, out)
	}
	if fake.Calls() == 0 {
		t.Error("the fake model was never asked")
	}
	if !strings.Contains(out, "generator: extractive ×2; judge: keywords") {
		t.Errorf("the summary lines do not name the generator and judge:\n%s", out)
	}
}

// TestStatusAndDiffEvalSizes: `shirube status` and the diff-eval report
// say what the corpus occupies (seed 004 argues from a storage budget):
// source bytes, page-database bytes, index bytes per generation and the
// Markdown/HTML ratio of the HTML sources.
func TestStatusAndDiffEvalSizes(t *testing.T) {
	workspace(t, indexedFixture(t))
	out := mustRun(t, "status")
	line := regexp.MustCompile(`(?m)^sizes:      source [\d.]+ [KM]?B, page database [\d.]+ [KM]?B, index [\d.]+ [KM]?B \(gen-\d+ [\d.]+ [KM]?B\), Markdown/HTML \d\.\d\d \(`)
	if !line.MatchString(out) {
		t.Errorf("status has no sizes line:\n%s", out)
	}
	var st struct {
		Sizes struct {
			Source  int64   `json:"source_bytes"`
			DB      int64   `json:"page_database_bytes"`
			Ratio   float64 `json:"markdown_html_ratio"`
			Indexes []struct {
				Name  string `json:"name"`
				Bytes int64  `json:"bytes"`
			} `json:"index_generations"`
		} `json:"sizes"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if s := st.Sizes; s.Source == 0 || s.DB == 0 || s.Ratio <= 0 || len(s.Indexes) != 1 || s.Indexes[0].Bytes == 0 {
		t.Errorf("status --json sizes %+v", s)
	}

	os.WriteFile("cases.json", []byte(tinyCases), 0o644)
	out = mustRun(t, "diff-eval", "--cases", "cases.json", "--data", "data", "--runs", "1", "--out-dir", "cmp", "--logs", "logs", "--work", "work")
	for _, name := range []string{"html-text", "markdown"} {
		if !regexp.MustCompile(`(?m)^` + name + ` size: source [\d.]+ [KM]?B, page database `).MatchString(out) {
			t.Errorf("diff-eval output has no size line for %s:\n%s", name, out)
		}
	}
	md, _ := filepath.Glob("cmp/diff_eval_*.md")
	if len(md) != 1 {
		t.Fatalf("reports %v", md)
	}
	if b, _ := os.ReadFile(md[0]); !strings.Contains(string(b), "- 容量 A: source ") || !strings.Contains(string(b), "Markdown/HTML") {
		t.Errorf("the Markdown report has no sizes:\n%s", b)
	}
}
