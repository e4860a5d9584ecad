package judge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/eval"
	"github.com/shirube/shirube/internal/golden"
	"github.com/shirube/shirube/internal/llm"
)

// fake is a scripted Completer. reply gets the question text of an
// evaluation request ("" for the connectivity check) and how many times
// that question was asked before.
type fake struct {
	mu    sync.Mutex
	reqs  []llm.Request
	seen  map[string]int
	reply func(question string, n int, req llm.Request) (llm.Response, error)
}

func (f *fake) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	f.reqs = append(f.reqs, req)
	if f.seen == nil {
		f.seen = map[string]int{}
	}
	q := questionOf(req)
	n := f.seen[q]
	f.seen[q]++
	if q == "" && req.MaxTokens == CheckMaxTokens {
		return llm.Response{Text: "OK", Model: "fake-model", CostUSD: 0.001}, nil
	}
	return f.reply(q, n, req)
}

// evalRequests returns the evaluation requests (not the check call).
func (f *fake) evalRequests() []llm.Request {
	var out []llm.Request
	for _, r := range f.reqs {
		if r.MaxTokens == EvalMaxTokens {
			out = append(out, r)
		}
	}
	return out
}

// questionOf extracts the question from a built-in prompt user message.
func questionOf(req llm.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	u := req.Messages[0].Content
	i := strings.Index(u, "<question>\n")
	j := strings.Index(u, "\n</question>")
	if i < 0 || j < i {
		return ""
	}
	return u[i+len("<question>\n") : j]
}

func jsonVerdict(p, r, a int, reasoning string) llm.Response {
	return llm.Response{Text: fmt.Sprintf(`{"precision": %d, "recall": %d, "accuracy": %d, "reasoning": %q}`, p, r, a, reasoning), Model: "fake-model", CostUSD: 0.01}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setup writes the three input files for n questions "Q<i>?" with ground
// truth "GT<i>" and answer "A<i>" into a new directory.
func setup(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	var q, g, a strings.Builder
	q.WriteString("Question Number,Question\n")
	g.WriteString("question_num,Ground Truth\n")
	a.WriteString("QuestionNumber,RAG Answer\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&q, "%d,Q%d?\n", i, i)
		fmt.Fprintf(&g, "%d,GT%d\n", i, i)
		fmt.Fprintf(&a, "Q%d,A%d\n", i, i)
	}
	write(t, filepath.Join(dir, "questions.csv"), q.String())
	write(t, filepath.Join(dir, "ground_truth.csv"), g.String())
	write(t, filepath.Join(dir, "rag_answers.csv"), a.String())
	return dir
}

// sleeps records injected sleeps.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func baseOptions(dir string, c eval.Completer, out *bytes.Buffer, s *sleeps) Options {
	return Options{
		Dir:           dir,
		ExeDir:        filepath.Join(dir, "bin"),
		CheckpointDir: filepath.Join(dir, "tmp"),
		Completer:     c,
		Seed:          1,
		Yes:           true,
		Out:           out,
		Sleep:         s.sleep,
		Now:           func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
}

func mkdirs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestRunGolden(t *testing.T) {
	dir := setup(t, 3)
	mkdirs(t, dir)
	f := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) {
		switch q {
		case "Q1?":
			return jsonVerdict(1, 1, 1, "Matches the ground truth. Same numbers. Extra detail."), nil
		case "Q2?":
			return jsonVerdict(1, 0, 1, "Misses the second step."), nil
		}
		return jsonVerdict(0, 0, 0, "Contradicts the ground truth."), nil
	}}
	var out bytes.Buffer
	s := &sleeps{}
	res, err := Run(context.Background(), baseOptions(dir, f, &out, s))
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	// 1 check call + 3 evaluations, 0.5 s between calls.
	if len(f.reqs) != 4 || res.Calls != 4 {
		t.Fatalf("calls = %d (%d), want 4", len(f.reqs), res.Calls)
	}
	if !reflect.DeepEqual(s.d, []time.Duration{DefaultDelay, DefaultDelay, DefaultDelay}) {
		t.Errorf("sleeps = %v, want 3 × 500ms", s.d)
	}
	if f.reqs[0].MaxTokens != CheckMaxTokens {
		t.Errorf("first call max tokens = %d, want %d", f.reqs[0].MaxTokens, CheckMaxTokens)
	}
	for _, r := range f.evalRequests() {
		if !r.JSON || r.Temperature == nil || *r.Temperature != 0 || r.System != DefaultPrompt || len(r.Messages) != 1 {
			t.Errorf("evaluation request = %+v", r)
		}
	}
	if res.Summary != (Summary{Total: 3, Scored: 3, Precision: 2, Recall: 1, Accuracy: 2}) {
		t.Errorf("summary = %+v", res.Summary)
	}
	if want := filepath.Join(dir, "Evaluation_Runs", "precision_scores_20250102_030405.csv"); res.Output != want {
		t.Errorf("output = %s, want %s", res.Output, want)
	}
	got, err := os.ReadFile(res.Output)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "precision_scores.golden.csv"), got)
	text := out.String()
	for _, w := range []string{
		"Files found:", "questions.csv: 3 questions", "Questions to evaluate: 3", "Random seed: 1",
		"Estimated cost:", "Proceed? [Y/n] y", "Evaluating question 1/3...", "Evaluating question 3/3...",
		"Precision: 2/3 (67%)", "Results written to",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "rag_eval.log")); err != nil {
		t.Errorf("debug log: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(entries) != 0 {
		t.Errorf("checkpoint not removed: %v", entries)
	}
}

func TestRunOrderFollowsSeed(t *testing.T) {
	order := func(seed uint64) []string {
		dir := setup(t, 8)
		mkdirs(t, dir)
		f := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) { return jsonVerdict(1, 1, 1, "ok"), nil }}
		var out bytes.Buffer
		o := baseOptions(dir, f, &out, &sleeps{})
		o.Seed = seed
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		var qs []string
		for _, r := range f.evalRequests() {
			qs = append(qs, questionOf(r))
		}
		return qs
	}
	a, b, c := order(5), order(5), order(6)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different order: %v vs %v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("seeds 5 and 6 gave the same order %v", a)
	}
	sorted := append([]string(nil), a...)
	sort.Strings(sorted)
	if reflect.DeepEqual(a, sorted) {
		t.Errorf("order %v is not shuffled", a)
	}
}

func TestRunHedgingConsensus(t *testing.T) {
	dir := setup(t, 2)
	mkdirs(t, dir)
	f := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) {
		if q == "Q1?" {
			return jsonVerdict(1, 1, 1, "Clearly correct."), nil
		}
		// Q2: the first verdict hedges; the 3 consensus runs vote
		// P 1,0,1  R 0,0,1  A 1,1,1 → P 1, R 0, A 1.
		votes := []llm.Response{
			jsonVerdict(0, 1, 0, "This is borderline; arguably the date is wrong."),
			jsonVerdict(1, 0, 1, "Fine."),
			jsonVerdict(0, 0, 1, "Wrong date."),
			jsonVerdict(1, 1, 1, "Acceptable."),
		}
		return votes[n], nil
	}}
	var out bytes.Buffer
	res, err := Run(context.Background(), baseOptions(dir, f, &out, &sleeps{}))
	if err != nil {
		t.Fatal(err)
	}
	var q2 []llm.Request
	for _, r := range f.evalRequests() {
		if questionOf(r) == "Q2?" {
			q2 = append(q2, r)
		}
	}
	if len(q2) != 1+ConsensusRuns {
		t.Fatalf("Q2 was judged %d times, want 1 + 3", len(q2))
	}
	if *q2[0].Temperature != 0 {
		t.Errorf("first run temperature = %v, want 0", *q2[0].Temperature)
	}
	for _, r := range q2[1:] {
		if *r.Temperature != ConsensusTemperature {
			t.Errorf("consensus temperature = %v, want 0.3", *r.Temperature)
		}
	}
	row := res.Rows[1]
	if row.Precision != 1 || row.Recall != 0 || row.Accuracy != 1 {
		t.Errorf("consensus verdict = %+v, want P1 R0 A1", row.Verdict)
	}
	if row.Consensus != "3-vote (hedge: borderline): P 2/3, R 1/3, A 3/3" {
		t.Errorf("consensus = %q", row.Consensus)
	}
	if res.Rows[0].Consensus != "" || res.Summary.Consensus != 1 {
		t.Errorf("Q1 consensus %q, summary %+v", res.Rows[0].Consensus, res.Summary)
	}
	b, _ := os.ReadFile(res.Output)
	if !strings.Contains(string(b), "#SUMMARY: Consensus Evaluations: 1\n") || !strings.Contains(string(b), `,"3-vote (hedge: borderline): P 2/3, R 1/3, A 3/3",`) {
		t.Errorf("output lacks the consensus marks:\n%s", b)
	}
}

func TestRunMalformedReplies(t *testing.T) {
	dir := setup(t, 3)
	mkdirs(t, dir)
	f := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) {
		switch q {
		case "Q1?": // repaired without a retry
			return llm.Response{Text: "Sure!\n```json\n{\"precision\": \"1\", \"recall\": true, \"accuracy\": 0, \"reasoning\": \"Off topic.\"}\n```"}, nil
		case "Q2?": // garbage, then a good reply on the retry
			if n == 0 {
				return llm.Response{Text: "I would rate this highly."}, errors.New("openai: model \"x\": the model did not return a JSON object")
			}
			if len(req.Messages) != 3 || req.Messages[1].Role != llm.RoleAssistant || req.Messages[2].Content != retryMessage {
				t.Errorf("retry request messages = %+v", req.Messages)
			}
			return jsonVerdict(1, 1, 1, "Good."), nil
		}
		return llm.Response{Text: `{"precision": "high"}`}, nil // garbage twice
	}}
	var out bytes.Buffer
	res, err := Run(context.Background(), baseOptions(dir, f, &out, &sleeps{}))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range f.evalRequests() {
		count[questionOf(r)]++
	}
	if want := map[string]int{"Q1?": 1, "Q2?": 2, "Q3?": 2}; !reflect.DeepEqual(count, want) {
		t.Errorf("calls per question = %v, want %v", count, want)
	}
	if r := res.Rows[0]; r.Verdict != (Verdict{1, 1, 0, "Off topic."}) || r.Error != "" {
		t.Errorf("Q1 row = %+v", r)
	}
	if r := res.Rows[1]; r.Verdict != (Verdict{1, 1, 1, "Good."}) || r.Error != "" {
		t.Errorf("Q2 row = %+v", r)
	}
	if r := res.Rows[2]; !strings.Contains(r.Error, "judge reply unreadable after one retry") {
		t.Errorf("Q3 row error = %q", r.Error)
	}
	if res.Summary != (Summary{Total: 3, Scored: 2, Errors: 1, Precision: 2, Recall: 2, Accuracy: 1}) {
		t.Errorf("summary = %+v", res.Summary)
	}
	if !strings.Contains(out.String(), "Warning: question 3: judge reply unreadable") {
		t.Errorf("no warning for question 3:\n%s", out.String())
	}
}

// TestRunResume kills a run after two questions (the context is cancelled
// as the model answers the second), then resumes it: the second run asks
// the model only about the remaining questions.
func TestRunResume(t *testing.T) {
	dir := setup(t, 5)
	mkdirs(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) {
		return jsonVerdict(1, 0, 1, "first run"), nil
	}}
	evals := 0
	killer := completerFunc(func(c context.Context, req llm.Request) (llm.Response, error) {
		resp, err := first.Complete(c, req)
		if req.MaxTokens == EvalMaxTokens {
			evals++
			if evals == 3 {
				cancel() // killed while the third question is being judged
				return llm.Response{}, context.Canceled
			}
		}
		return resp, err
	})
	var out bytes.Buffer
	o := baseOptions(dir, killer, &out, &sleeps{})
	if _, err := Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run err = %v, want context.Canceled", err)
	}
	cps, _ := filepath.Glob(filepath.Join(dir, "tmp", "shirube-judge-*.json"))
	if len(cps) != 1 {
		t.Fatalf("checkpoints after the kill: %v", cps)
	}
	judged := map[string]bool{}
	for _, r := range first.evalRequests()[:2] {
		judged[questionOf(r)] = true
	}

	second := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) {
		return jsonVerdict(1, 1, 1, "second run"), nil
	}}
	out.Reset()
	o = baseOptions(dir, second, &out, &sleeps{})
	o.Yes = false
	o.Seed = 99                      // ignored: a resumed run keeps its seed and order
	o.In = strings.NewReader("\n\n") // Enter at both prompts: yes
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("resumed run: %v\n%s", err, out.String())
	}
	if !res.Resumed || res.Seed != 1 {
		t.Errorf("resumed = %v, seed = %d; want true, 1", res.Resumed, res.Seed)
	}
	evs := second.evalRequests()
	if len(evs) != 3 {
		t.Fatalf("resumed run judged %d questions, want 3", len(evs))
	}
	for _, r := range evs {
		if judged[questionOf(r)] {
			t.Errorf("question %s judged twice", questionOf(r))
		}
	}
	text := out.String()
	for _, w := range []string{"2 of 5 questions evaluated", "Resume previous run? [Y/n]", "2 already done, 3 left", "Evaluating question 3/5...", "Evaluating question 5/5..."} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "Evaluating question 1/5...") {
		t.Errorf("resumed run re-evaluated question 1/5:\n%s", text)
	}
	firstRun, secondRun := 0, 0
	for _, r := range res.Rows {
		switch r.Reasoning {
		case "first run":
			firstRun++
		case "second run":
			secondRun++
		}
	}
	if firstRun != 2 || secondRun != 3 {
		t.Errorf("rows from the first run %d, second %d; want 2, 3", firstRun, secondRun)
	}
	if cps, _ := filepath.Glob(filepath.Join(dir, "tmp", "shirube-judge-*")); len(cps) != 0 {
		t.Errorf("checkpoint left after success: %v", cps)
	}
}

func TestRunResumeDeclined(t *testing.T) {
	dir := setup(t, 2)
	mkdirs(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	f := completerFunc(func(c context.Context, req llm.Request) (llm.Response, error) {
		if req.MaxTokens == EvalMaxTokens {
			cancel()
			return llm.Response{}, context.Canceled
		}
		return llm.Response{Text: "OK"}, nil
	})
	var out bytes.Buffer
	if _, err := Run(ctx, baseOptions(dir, f, &out, &sleeps{})); err == nil {
		t.Fatal("first run succeeded")
	}
	second := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) { return jsonVerdict(1, 1, 1, "ok"), nil }}
	o := baseOptions(dir, second, &out, &sleeps{})
	o.Yes = false
	o.In = strings.NewReader("n\ny\n")
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed || len(second.evalRequests()) != 2 {
		t.Errorf("resumed %v, evaluations %d; want a fresh run of 2", res.Resumed, len(second.evalRequests()))
	}
}

type completerFunc func(ctx context.Context, req llm.Request) (llm.Response, error)

func (f completerFunc) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return f(ctx, req)
}

func TestRunDeclined(t *testing.T) {
	dir := setup(t, 2)
	mkdirs(t, dir)
	f := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) { return jsonVerdict(1, 1, 1, "ok"), nil }}
	for _, in := range []string{"n\n", "no\n", "maybe\nN\n"} {
		var out bytes.Buffer
		o := baseOptions(dir, f, &out, &sleeps{})
		o.Yes = false
		o.In = strings.NewReader(in)
		if _, err := Run(context.Background(), o); !errors.Is(err, ErrDeclined) {
			t.Errorf("input %q: err = %v, want ErrDeclined", in, err)
		}
	}
	var out bytes.Buffer
	o := baseOptions(dir, f, &out, &sleeps{})
	o.Yes = false
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrInputEnded) || !strings.Contains(err.Error(), "yes option") {
		t.Errorf("no input: err = %v, want ErrInputEnded with a hint about the yes option", err)
	}
	if len(f.reqs) != 0 {
		t.Errorf("the model was called %d times before confirmation", len(f.reqs))
	}
}

func TestRunFatalAPIError(t *testing.T) {
	dir := setup(t, 3)
	mkdirs(t, dir)
	apiErr := &llm.Error{Provider: "anthropic", Model: "m", StatusCode: 401, Err: errors.New("invalid x-api-key")}
	f := &fake{reply: func(q string, n int, req llm.Request) (llm.Response, error) { return llm.Response{}, apiErr }}
	var out bytes.Buffer
	_, err := Run(context.Background(), baseOptions(dir, f, &out, &sleeps{}))
	if !errors.As(err, new(*llm.Error)) || !strings.Contains(err.Error(), "Progress is saved") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.evalRequests()); n != 1 {
		t.Errorf("evaluation calls = %d, want 1 (stop at the first API failure)", n)
	}

	// A failing connectivity check stops before any evaluation.
	check := completerFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) { return llm.Response{}, apiErr })
	_, err = Run(context.Background(), baseOptions(setup(t, 1), check, &out, &sleeps{}))
	if err == nil || !strings.Contains(err.Error(), "did not answer a test request") {
		t.Errorf("check err = %v", err)
	}
}

func TestRunPromptOverride(t *testing.T) {
	tests := []struct {
		name       string
		where      string // "dir", "exe" or "option"
		text       string
		wantSystem string
		wantUser   string
	}{
		{"static in working dir", "dir", "Judge strictly.", "Judge strictly.", "<question>\nQ1?\n</question>\n\n<ground_truth>\nGT1\n</ground_truth>\n\n<rag_answer>\nA1\n</rag_answer>"},
		{"next to executable", "exe", "From exe.", "From exe.", ""},
		{"template", "dir", "Q: {question}\nGT: {ground_truth}\nA: {rag_answer}\nReply in JSON.", "", "Q: Q1?\nGT: GT1\nA: A1\nReply in JSON."},
		{"explicit file", "option", "Custom file.", "Custom file.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := setup(t, 1)
			mkdirs(t, dir)
			var c []llm.Request
			f := completerFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
				c = append(c, req)
				return jsonVerdict(1, 1, 1, "ok"), nil
			})
			var out bytes.Buffer
			o := baseOptions(dir, f, &out, &sleeps{})
			switch tt.where {
			case "dir":
				write(t, filepath.Join(dir, PromptFile), tt.text)
			case "exe":
				write(t, filepath.Join(o.ExeDir, PromptFile), tt.text)
			case "option":
				write(t, filepath.Join(dir, "my_prompt.txt"), tt.text)
				o.PromptFile = "my_prompt.txt"
			}
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			ev := c[len(c)-1]
			if ev.System != tt.wantSystem {
				t.Errorf("system = %q, want %q", ev.System, tt.wantSystem)
			}
			if tt.wantUser != "" && ev.Messages[0].Content != tt.wantUser {
				t.Errorf("user = %q, want %q", ev.Messages[0].Content, tt.wantUser)
			}
			if !strings.Contains(res.Prompt.Source, "(custom)") || !strings.Contains(out.String(), "(custom)") {
				t.Errorf("prompt source = %q", res.Prompt.Source)
			}
		})
	}
	// A missing explicit prompt file is an error.
	dir := setup(t, 1)
	o := baseOptions(dir, &fake{}, &bytes.Buffer{}, &sleeps{})
	o.PromptFile = "nope.txt"
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "prompt file nope.txt not found") {
		t.Errorf("err = %v", err)
	}
}

func TestRunMissingFiles(t *testing.T) {
	tests := []struct{ remove, want string }{
		{"questions.csv", "questions.csv not found. Create this file with columns: Question Number, Question"},
		{"ground_truth.csv", "ground_truth.csv not found. Create this file with columns: Question Number, Ground Truth"},
		{"rag_answers.csv", "rag_answers.csv not found. Create this file with columns: Question Number, RAG Answer"},
	}
	for _, tt := range tests {
		dir := setup(t, 1)
		if err := os.Remove(filepath.Join(dir, tt.remove)); err != nil {
			t.Fatal(err)
		}
		_, err := Run(context.Background(), baseOptions(dir, &fake{}, &bytes.Buffer{}, &sleeps{}))
		if err == nil || err.Error() != tt.want {
			t.Errorf("err = %v\nwant %s", err, tt.want)
		}
	}
	dir := setup(t, 1)
	write(t, filepath.Join(dir, "ground_truth.csv"), "id,truth\n1,x\n")
	_, err := Run(context.Background(), baseOptions(dir, &fake{}, &bytes.Buffer{}, &sleeps{}))
	if err == nil || err.Error() != "ground_truth.csv needs the columns Question Number, Ground Truth (found: id, truth). Rename the header row to match" {
		t.Errorf("err = %v", err)
	}
	if _, err := Run(context.Background(), Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "needs a model client") {
		t.Errorf("no completer: err = %v", err)
	}
	if _, err := Run(context.Background(), Options{Dir: dir, Judge: "gpt"}); err == nil || !strings.Contains(err.Error(), `unknown judge "gpt"`) {
		t.Errorf("bad judge: err = %v", err)
	}
}

func TestRunIntersectionAndLatin1(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t, dir)
	write(t, filepath.Join(dir, "questions.csv"), "Question Number,Question\n1,Q1?\n2,Q2?\n3,Q3?\n")
	write(t, filepath.Join(dir, "ground_truth.csv"), "Question Number,Ground Truth\n1,Caf\xe9 au lait\n2,GT2\n4,GT4\n")
	write(t, filepath.Join(dir, "rag_answers.csv"), "\uFEFFQuestion Number,RAG Answer\n001,\n2,A2\n")
	var got []string
	f := completerFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if req.MaxTokens == EvalMaxTokens {
			got = append(got, req.Messages[0].Content)
		}
		return jsonVerdict(0, 0, 0, "x"), nil
	})
	var out bytes.Buffer
	res, err := Run(context.Background(), baseOptions(dir, f, &out, &sleeps{}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Total != 2 || len(got) != 2 {
		t.Fatalf("evaluated %d questions (%d calls), want 2", res.Summary.Total, len(got))
	}
	text := out.String()
	for _, w := range []string{
		"Warning: ground_truth.csv: not valid UTF-8; read as latin-1",
		"Warning: question 3 excluded: missing from ground_truth.csv and rag_answers.csv",
		"Warning: question 4 excluded: missing from questions.csv and rag_answers.csv",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	joined := strings.Join(got, "\n")
	// Latin-1 decoded; the empty answer is sent as it is.
	if !strings.Contains(joined, "<ground_truth>\nCafé au lait\n</ground_truth>\n\n<rag_answer>\n\n</rag_answer>") {
		t.Errorf("requests:\n%s", joined)
	}
}

func TestRunLexical(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t, dir)
	write(t, filepath.Join(dir, "questions.csv"), "Question Number,Question\n1,首都は？\n2,Capital of France?\n")
	write(t, filepath.Join(dir, "ground_truth.csv"), "Question Number,Ground Truth\n1,首都は東京\n2,Paris\n")
	write(t, filepath.Join(dir, "rag_answers.csv"), "Question Number,RAG Answer\n1,日本の首都は東京です。\n2,I don't know.\n")
	var out bytes.Buffer
	s := &sleeps{}
	o := baseOptions(dir, nil, &out, s)
	o.Judge = JudgeLexical
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls != 0 || len(s.d) != 0 {
		t.Errorf("lexical run made %d calls and %d sleeps", res.Calls, len(s.d))
	}
	if res.Summary != (Summary{Total: 2, Scored: 2, Precision: 2, Recall: 1, Accuracy: 1}) {
		t.Errorf("summary = %+v", res.Summary)
	}
	b, _ := os.ReadFile(res.Output)
	if !strings.Contains(string(b), "#SUMMARY: Judge: lexical (offline word overlap, no LLM)\n") {
		t.Errorf("output does not name the judge:\n%s", b)
	}
	if !strings.Contains(out.String(), "Estimated cost: $0.00") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestEstimateCost(t *testing.T) {
	r := &runner{o: Options{Judge: JudgeLLM, Model: "sonnet", Completer: &fake{}, Cost: llm.Cost}, prompt: Prompt{Text: "abcd"}}
	qs := []Question{{Question: "東京", GroundTruth: "", Answer: ""}}
	got := r.estimate(qs)
	// check: 15+10 input + 5 output; question: system 1 + user (2 kanji +
	// ceil(86/4)=22) + 10 = 35 input, 150 output → 60 in, 155 out.
	// The Sonnet price (3 / 15 USD per 1M) gives $0.002505.
	if !strings.Contains(got, "~$0.00 for 1 question with "+llm.ResolveAnthropicModel("sonnet")) || !strings.Contains(got, "~$0.0025 per question") || !strings.Contains(got, "~60 input + ~155 output tokens") {
		t.Errorf("estimate = %q", got)
	}
	r.o.Model = "my-local-model"
	if got := r.estimate(qs); !strings.Contains(got, `unknown — no price for model "my-local-model"`) {
		t.Errorf("unknown model estimate = %q", got)
	}
}
