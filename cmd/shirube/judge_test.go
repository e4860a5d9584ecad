package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shirube/shirube/internal/llmtest"
)

const (
	questionsCSV   = "Question Number,Question\n1,アカウントロックアウトのしきい値は何回ですか？\n2,インシデントを認知してからチケットを起票するまでの期限は？\n"
	groundTruthCSV = "Question Number,Ground Truth\n1,連続10回の認証失敗でアカウントがロックされる。\n2,15分以内にチケットを起票する。\n"
	answersJSON    = `[{"question": "アカウントロックアウトのしきい値は何回ですか？", "answer": "連続10回の認証失敗でロックされます。"},
 {"question": "インシデントを認知してからチケットを起票するまでの期限は", "answer": "15分以内にチケットを起票します。"}]`
)

// judgeFiles writes questions.csv, ground_truth.csv and rag_answers.csv
// (the last through convert).
func judgeFiles(t *testing.T) {
	t.Helper()
	os.MkdirAll("RAG_JSON_Files", 0o755)
	os.WriteFile("RAG_JSON_Files/run.json", []byte(answersJSON), 0o644)
	os.WriteFile("questions.csv", []byte(questionsCSV), 0o644)
	os.WriteFile("ground_truth.csv", []byte(groundTruthCSV), 0o644)
	out := mustRun(t, "convert", "RAG_JSON_Files", "--questions", "questions.csv", "-o", "rag_answers.csv")
	if !strings.Contains(out, "2 of 2 answers matched") {
		t.Errorf("convert output:\n%s", out)
	}
}

func TestJudgeLexical(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	judgeFiles(t)
	out := mustRun(t, "judge", "--judge", "lexical", "--yes", "--seed", "42")
	for _, want := range []string{"Judge: lexical", "Random seed: 42", "Precision: ", "Results written to Evaluation_Runs/precision_scores_"} {
		if !strings.Contains(out, want) {
			t.Errorf("judge output lacks %q:\n%s", want, out)
		}
	}
	matches, _ := filepath.Glob("Evaluation_Runs/precision_scores_*.csv")
	if len(matches) != 1 {
		t.Fatalf("results %v, want one file", matches)
	}
	b, _ := os.ReadFile(matches[0])
	if !strings.Contains(string(b), "#SUMMARY:") {
		t.Errorf("results lack the #SUMMARY header:\n%s", b)
	}
}

func TestJudgeWithoutKey(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	judgeFiles(t)
	_, _, err := run(t, "", "judge", "--yes")
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != 1 {
		t.Fatalf("judge without a key: %v, want exit code 1", err)
	}
	for _, want := range []string{"Error:", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "--judge lexical"} {
		if !strings.Contains(ec.msg, want) {
			t.Errorf("message lacks %q:\n%s", want, ec.msg)
		}
	}
	// Choosing OpenAI without its key names that key.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	_, _, err = run(t, "", "judge", "--yes", "--provider", "openai")
	if !errors.As(err, &ec) || !strings.Contains(ec.msg, "OPENAI_API_KEY") || !strings.Contains(ec.msg, "--judge lexical") {
		t.Errorf("--provider openai without its key: %v", err)
	}
}

// judgeVerdict is the fake Anthropic server's answer to every Messages
// request: a judge verdict, with usage.
var judgeVerdict = llmtest.Reply{
	Text:         `{"precision": 1, "recall": 1, "accuracy": 1, "reasoning": "The answer states the same fact as the ground truth."}`,
	PromptTokens: 500, CompletionTokens: 50,
}

func TestJudgeAnthropic(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	judgeFiles(t)
	fake := llmtest.Anthropic(t, func(llmtest.Request) llmtest.Reply { return judgeVerdict })
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
	t.Setenv("ANTHROPIC_BASE_URL", fake.BaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-openai-must-not-be-used")

	out, errOut, err := run(t, "y\n", "judge", "--provider", "anthropic", "--delay", "0", "--seed", "5")
	if err != nil {
		t.Fatalf("judge: %v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{"Proceed? [Y/n]", "Precision: 2/2", "Recall: 2/2", "Accuracy: 2/2", "Judge: llm (model claude-"} {
		if !strings.Contains(out, want) {
			t.Errorf("judge output lacks %q:\n%s", want, out)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 3 { // connection check + 2 questions
		t.Errorf("fake Anthropic got %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if key := r.Header.Get("X-Api-Key"); r.Path != "/v1/messages" || !strings.Contains(r.Model, "sonnet") || key != "sk-ant-test-key" {
			t.Errorf("request %d: path %s model %s key %s; want /v1/messages, a Sonnet model, the Anthropic key", i, r.Path, r.Model, key)
		}
	}

	// Without --provider the Anthropic key still wins for the judge (seed 001).
	out2 := mustRun(t, "judge", "--yes", "--delay", "0", "--model", "haiku", "--seed", "5")
	var models []string
	for _, r := range fake.Requests() {
		models = append(models, r.Model)
	}
	if !strings.Contains(out2, "Precision: 2/2") || len(models) != 6 || !strings.Contains(models[5], "haiku") {
		t.Errorf("default provider / --model haiku: models %v\n%s", models, out2)
	}
}

// TestJudgeNoVerdictKeepsCheckpoint: a judge model that answers the
// connection check but never gives a readable verdict. Nothing was scored,
// so judge exits ExitJudgeFailed (not 0 with "Precision: 0/0") and keeps
// its checkpoint (seed 001: on failure the checkpoint persists); the next
// run, with the model fixed, resumes and asks both questions again.
func TestJudgeNoVerdictKeepsCheckpoint(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	judgeFiles(t)
	var broken atomic.Bool
	broken.Store(true)
	fake := llmtest.Anthropic(t, func(r llmtest.Request) llmtest.Reply {
		if r.System == "" {
			return llmtest.Reply{Text: "OK"} // the connection check
		}
		if broken.Load() {
			return llmtest.Reply{Text: "I would rate this answer highly."}
		}
		return judgeVerdict
	})
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
	t.Setenv("ANTHROPIC_BASE_URL", fake.BaseURL())

	out, _, err := run(t, "", "judge", "--yes", "--delay", "0", "--seed", "5")
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != ExitJudgeFailed || !strings.Contains(ec.msg, "no verdict for any question") || !strings.Contains(ec.msg, "checkpoint") {
		t.Fatalf("judge with every verdict unreadable: err %v; want exit %d saying no question got a verdict\n%s", err, ExitJudgeFailed, out)
	}
	cps, _ := filepath.Glob(filepath.Join(os.TempDir(), "shirube-judge-*"))
	if len(cps) != 1 {
		t.Fatalf("checkpoints after the failed run: %v; want it kept", cps)
	}

	broken.Store(false)
	out = mustRun(t, "judge", "--yes", "--delay", "0")
	for _, want := range []string{"Found a checkpoint of an unfinished run: 0 of 2 questions evaluated.", "Random seed: 5", "Precision: 2/2"} {
		if !strings.Contains(out, want) {
			t.Errorf("resumed run lacks %q:\n%s", want, out)
		}
	}
	if cps, _ := filepath.Glob(filepath.Join(os.TempDir(), "shirube-judge-*")); len(cps) != 0 {
		t.Errorf("checkpoint left after the successful run: %v", cps)
	}
}

// TestJudgeLexicalNumbersAndSummaryLine: the offline judge does not score
// 「5年間」 against a ground truth of 「1年間」 as correct (numbers must
// match), and the results file's first bytes are "#SUMMARY:", with no
// byte-order mark before them (seed 001).
func TestJudgeLexicalNumbersAndSummaryLine(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	os.WriteFile("questions.csv", []byte("Question Number,Question\n1,ログの保管期間は？\n"), 0o644)
	os.WriteFile("ground_truth.csv", []byte("Question Number,Ground Truth\n1,ログの保管期間は1年間です。\n"), 0o644)
	os.WriteFile("rag_answers.csv", []byte("Question Number,RAG Answer\n1,ログの保管期間は5年間です [1]。\n"), 0o644)
	out := mustRun(t, "judge", "--judge", "lexical", "--yes", "--seed", "1")
	for _, want := range []string{"Recall: 0/1", "Accuracy: 0/1"} {
		if !strings.Contains(out, want) {
			t.Errorf("5年間 against 1年間: output lacks %q:\n%s", want, out)
		}
	}
	matches, _ := filepath.Glob("Evaluation_Runs/precision_scores_*.csv")
	if len(matches) != 1 {
		t.Fatalf("results %v, want one file", matches)
	}
	b, _ := os.ReadFile(matches[0])
	if !strings.HasPrefix(string(b), "#SUMMARY: Total Questions: 1\n") {
		t.Errorf("results file starts with %q; want the #SUMMARY line itself", b[:min(len(b), 40)])
	}
}
