package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/llmtest"
)

const failingDataset = `{"version": "1.0", "test_cases": [
 {"id": "f1", "category": "normal", "query": "アカウントロックアウトのしきい値は何回ですか？",
  "expected_citations": ["runbooks/no_such_page.md"], "expected_keywords": ["存在しない語句"],
  "expected_flags": {"insufficient_evidence": true, "ambiguous_query": false}}]}`

// copyEvalDataset puts the repository's eval dataset at eval/eval_dataset.json.
func copyEvalDataset(t *testing.T, repo string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "eval", "eval_dataset.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll("eval", 0o755)
	os.WriteFile("eval/eval_dataset.json", b, 0o644)
}

// testEvalDataset runs the shipped evaluation set through the CLI with its
// real defaults (automatic BM25 weight, local embedder, procedure
// look-ahead) — not a harness with settings of its own — and checks that
// docs/EVALUATION.md states the figure this reproduces, failing cases
// included (issue 22: the docs said 17/17 while the CLI passed 15/17).
func testEvalDataset(t *testing.T, repo string) {
	copyEvalDataset(t, repo)

	out := mustRun(t, "eval", "eval/eval_dataset.json", "--logs", "logs")
	if !strings.Contains(out, ": PASS — results in ") {
		t.Errorf("offline eval did not pass:\n%s", out)
	}
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "EVALUATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	summary := regexp.MustCompile(`\d+ of \d+ cases passed \(\d+%\), average [\d.]+: PASS`)
	got, documented := summary.FindString(out), summary.FindString(string(doc))
	if got == "" || got != documented {
		t.Errorf("the CLI reproduces %q; docs/EVALUATION.md states %q", got, documented)
	}
	for _, line := range regexp.MustCompile(`(?m)^\[\d+/\d+\] \S+ +\S+ +[\d.]+ FAIL$`).FindAllString(out, -1) {
		if !strings.Contains(string(doc), line) {
			t.Errorf("docs/EVALUATION.md does not list the failing case the CLI reports: %q", line)
		}
	}
	matches, _ := filepath.Glob("eval/evaluation_results_*.json")
	if len(matches) != 1 {
		t.Fatalf("results files %v, want one", matches)
	}
	var res struct {
		Verdict string `json:"verdict"`
		Judge   string `json:"judge"`
	}
	jb, _ := os.ReadFile(matches[0])
	if err := json.Unmarshal(jb, &res); err != nil || res.Verdict != "PASS" || res.Judge != "deterministic" {
		t.Errorf("results file: verdict %q judge %q err %v", res.Verdict, res.Judge, err)
	}

	os.WriteFile("bad.json", []byte(failingDataset), 0o644)
	_, _, err = run(t, "", "eval", "bad.json", "--logs", "logs")
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != 1 || !strings.Contains(ec.msg, "FAIL") {
		t.Errorf("failing dataset: err %v, want exit code 1 with FAIL", err)
	}
}

// testEvalJudgeDown: eval --judge llm against a fake OpenAI server whose
// every judge call fails with HTTP 500. The answers come from the same
// server; the run must end with ExitJudgeFailed, not PASS.
func testEvalJudgeDown(t *testing.T, repo string) {
	copyEvalDataset(t, repo)
	fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.User, "SOC運用RAGシステムの評価者") {
			return llmtest.Reply{Status: 500, RetryAfter: "0", ErrorMessage: "judge overloaded"}
		}
		return fakeOpenAIReply(r)
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	_, _, err := run(t, "", "eval", "eval/eval_dataset.json", "--judge", "llm", "--logs", "logs")
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != ExitJudgeFailed || !strings.Contains(ec.msg, "LLM judge") || !strings.Contains(ec.msg, "judge overloaded") {
		t.Fatalf("eval with the judge down: err %v; want exit %d naming the judge failure", err, ExitJudgeFailed)
	}
	matches, _ := filepath.Glob("eval/evaluation_results_*.json")
	if len(matches) != 1 {
		t.Fatalf("results files %v, want one", matches)
	}
	var res struct {
		Verdict     string `json:"verdict"`
		Judged      int    `json:"judged"`
		JudgeFailed int    `json:"judge_failed"`
		Total       int    `json:"total"`
		Cases       []struct {
			ScoredBy string `json:"scored_by"`
			Passed   bool   `json:"passed"`
		} `json:"cases"`
	}
	jb, _ := os.ReadFile(matches[0])
	if err := json.Unmarshal(jb, &res); err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "ERROR" || res.Judged != 0 || res.JudgeFailed != res.Total || res.Total == 0 {
		t.Errorf("results: verdict %s, judged %d, judge_failed %d of %d", res.Verdict, res.Judged, res.JudgeFailed, res.Total)
	}
	for i, c := range res.Cases {
		if c.ScoredBy != "deterministic-fallback" || c.Passed {
			t.Errorf("case %d scored by %q, passed %t", i, c.ScoredBy, c.Passed)
		}
	}
}

// testEvalLenientJudge: eval --judge llm with a generator that answers
// every question 「手順に従ってください [1]。」 and a lenient judge that gives
// every axis 85. Missing expected keywords lower the judge's score, so the
// run must FAIL (issue 22: it passed at 85), and every case names its
// generator.
func testEvalLenientJudge(t *testing.T, repo string) {
	copyEvalDataset(t, repo)
	fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.User, "SOC運用RAGシステムの評価者") {
			return llmtest.Reply{Text: `{"grounding": 85, "accuracy": 85, "completeness": 85, "safety": 85, "citation": 85, "conciseness": 85, "reasoning": "問題なし"}`}
		}
		if rf, _ := r.Body["response_format"].(map[string]any); rf["type"] == "json_object" {
			return llmtest.Reply{Text: `{"claims":[{"n":1,"supported":true,"evidence":[1]}]}`}
		}
		return llmtest.Reply{Text: "手順に従ってください [1]。", Model: "gpt-4o-mini"}
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	_, _, err := run(t, "", "eval", "eval/eval_dataset.json", "--judge", "llm", "--logs", "logs")
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != 1 || !strings.Contains(ec.msg, "FAIL") {
		t.Fatalf("eval with a lenient judge: err %v; want exit 1 with FAIL", err)
	}
	matches, _ := filepath.Glob("eval/evaluation_results_*.json")
	var res struct {
		Cases []struct {
			ID        string  `json:"id"`
			Generator string  `json:"generator"`
			ScoredBy  string  `json:"scored_by"`
			Score     float64 `json:"score"`
			Judge     *struct {
				Average float64 `json:"average"`
			} `json:"judge"`
			Checks []struct {
				Name   string `json:"name"`
				Passed bool   `json:"passed"`
			} `json:"checks"`
		} `json:"cases"`
	}
	jb, _ := os.ReadFile(matches[0])
	if err := json.Unmarshal(jb, &res); err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cases {
		if c.Generator == "" || c.ScoredBy == "" {
			t.Errorf("case %s: generator %q, scored by %q; want both named", c.ID, c.Generator, c.ScoredBy)
		}
		for _, ck := range c.Checks {
			if ck.Name == "expected_keywords" && !ck.Passed && c.Judge != nil && c.Score >= c.Judge.Average {
				t.Errorf("case %s misses keywords but keeps the judge's %v (score %v)", c.ID, c.Judge.Average, c.Score)
			}
		}
	}
}
