package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/llmtest"
)

// run executes one command line in-process.
func run(t testing.TB, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(stdin))
	err = root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// mustRun executes a command line that must succeed.
func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	out, errOut, err := run(t, "", args...)
	if err != nil {
		t.Fatalf("shirube %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// offlineEnv removes every setting that could reach a real LLM or move the
// folders, and keeps checkpoints inside the test.
func offlineEnv(t testing.TB) {
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
		"SHIRUBE_PROVIDER", "SHIRUBE_MODEL", "SHIRUBE_GENERATOR", "SHIRUBE_DATA", "SHIRUBE_DATABASE", "SHIRUBE_INDEX",
		"SHIRUBE_LOGS", "SHIRUBE_EMBEDDER", "SHIRUBE_K", "SHIRUBE_EVIDENCE_THRESHOLD", "SHIRUBE_LLM_TIMEOUT"} {
		t.Setenv(k, "")
	}
	t.Setenv("TMPDIR", t.TempDir())
}

// indexedFixture indexes the demo corpus (examples/data) once, with the
// default relative folders (./data, ./database, ./.shirube), into a folder
// of t that workspace copies and no test changes.
func indexedFixture(t *testing.T) string {
	t.Helper()
	offlineEnv(t)
	src, err := filepath.Abs("../../examples/data")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out := mustRun(t, "index")
	if !strings.Contains(out, "indexed 7 documents") {
		t.Fatalf("index output:\n%s", out)
	}
	return dir
}

// workspace copies the indexed demo corpus into a fresh folder and makes it
// the working folder, so ./data, ./database and ./.shirube are the defaults.
func workspace(t *testing.T, fixture string) string {
	t.Helper()
	offlineEnv(t)
	dst := filepath.Join(t.TempDir(), "ws")
	if err := os.CopyFS(dst, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dst)
	return dst
}

// TestEvalCommands runs the commands that need an index on one indexed
// copy of the demo corpus; each subtest works on its own copy.
func TestEvalCommands(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fixture := indexedFixture(t)
	t.Run("BatchAskOptimizeUndo", func(t *testing.T) { testBatchAskOptimizeUndo(t, workspace(t, fixture)) })
	t.Run("OptimizeNeedsInput", func(t *testing.T) { workspace(t, fixture); testOptimizeNeedsInput(t) })
	t.Run("Questions", func(t *testing.T) { testQuestions(t, workspace(t, fixture)) })
	t.Run("QuestionsCategorized", func(t *testing.T) {
		ws := workspace(t, fixture)
		mustRun(t, "index", "--categorize")
		sections, _ := filepath.Glob(filepath.Join(ws, "database", "manuals", "vpn_manual", "*", "page_*.md"))
		if len(sections) == 0 {
			t.Fatal("index --categorize wrote no section folder for the PDF")
		}
		testQuestions(t, ws) // every reference names a page that exists
		_, rows := readCSV(t, "q.csv")
		found := false
		for _, r := range rows {
			found = found || strings.Contains(r[2], "vpn_manual/") && strings.Count(r[2], "/") >= 4
		}
		if !found {
			t.Error("no reference names a page of the PDF inside its section folder")
		}
	})
	t.Run("EvalDataset", func(t *testing.T) { workspace(t, fixture); testEvalDataset(t, repo) })
	t.Run("EvalJudgeDown", func(t *testing.T) { workspace(t, fixture); testEvalJudgeDown(t, repo) })
	t.Run("DiffEval", func(t *testing.T) { workspace(t, fixture); testDiffEval(t) })
	t.Run("DiffEvalAllSkipped", func(t *testing.T) { workspace(t, fixture); testDiffEvalAllSkipped(t) })
}

// tree lists every file under dir, relative and sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out
}

func readCSV(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	h, rows, _, err := csvx.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return h, rows
}

func col(t *testing.T, header []string, name string) int {
	t.Helper()
	i := slices.Index(header, name)
	if i < 0 {
		t.Fatalf("column %q missing from %v", name, header)
	}
	return i
}

// field returns the value after "label: " on a line of out.
func field(t *testing.T, out, label string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + `: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q line in:\n%s", label, out)
	}
	return m[1]
}

const batchInput = `Question,Ground Truth,Reference Document,Page,Checklist
アカウントロックアウトのしきい値は何回ですか？,連続10回の失敗でロックされる,database/runbooks/account_lockout/page_001.md,1,"- しきい値
- 10回"
インシデントを認知してからチケットを起票するまでの期限は？,15分以内に起票する,database/runbooks/incident_response/page_001.md,1,"- 15分以内
- 起票"
公衆無線LANでVPNを使うときの注意は？,必ずVPNを接続してから業務システムにアクセスする,database/runbooks/log_retention/page_001.md,1,"- VPN
- 業務システム"
`

// testBatchAskOptimizeUndo: a ground-truth CSV gives the seed 000 results
// and summary CSVs; the missed third row is optimised automatically, and
// optimize --undo restores the database tree.
func testBatchAskOptimizeUndo(t *testing.T, ws string) {
	before := tree(t, filepath.Join(ws, "database"))
	if err := os.WriteFile("input.csv", []byte(batchInput), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "ask", "input.csv", "--workers", "2", "--logs", "logs")

	results := field(t, out, "results")
	if !strings.HasPrefix(filepath.ToSlash(results), "results/input_results_") || !strings.HasSuffix(results, ".csv") {
		t.Errorf("results file %q, want results/input_results_YYYYMMDD_HHMMSS.csv", results)
	}
	header, rows := readCSV(t, results)
	seedCols := []string{"Question", "Ground Truth", "Reference Document", "Page", "Checklist",
		"RAG Answer", "Retrieved Files", "Checklist Recall", "Checklist Precision", "Checklist TP", "Checklist FP", "Checklist FN",
		"Ref Recall", "Ref Precision", "Ref Specificity", "Ref TP", "Ref TN", "Ref FP", "Ref FN", "Evaluation Reason"}
	if len(header) < len(seedCols) || !slices.Equal(header[:len(seedCols)], seedCols) {
		t.Errorf("results header = %v\nwant it to start with the seed columns %v", header, seedCols)
	}
	if len(rows) != 3 {
		t.Fatalf("results have %d rows, want 3", len(rows))
	}
	recall, retrieved, answer := col(t, header, "Ref Recall"), col(t, header, "Retrieved Files"), col(t, header, "RAG Answer")
	if rows[0][recall] != "1" || !strings.Contains(rows[0][retrieved], "database/runbooks/account_lockout/page_001.md") {
		t.Errorf("row 1: Ref Recall %q, retrieved %q; want the lockout page found", rows[0][recall], rows[0][retrieved])
	}
	if !strings.Contains(rows[0][answer], "10") {
		t.Errorf("row 1 answer %q does not state the threshold", rows[0][answer])
	}
	if rows[2][recall] != "0" {
		t.Errorf("row 3 Ref Recall = %q, want 0 (its reference is the wrong page on purpose)", rows[2][recall])
	}

	summary := field(t, out, "summary")
	sh, srows := readCSV(t, summary)
	if !slices.Equal(sh, []string{"Metric", "Value", "Rows"}) {
		t.Errorf("summary header = %v", sh)
	}
	metricsSeen := map[string]string{}
	for _, r := range srows {
		metricsSeen[r[0]] = r[1]
	}
	if metricsSeen["Ref Recall"] != "0.6667" {
		t.Errorf("summary Ref Recall = %q, want 0.6667 (2 of 3 rows)", metricsSeen["Ref Recall"])
	}

	// The automatic optimisation copied the missed page and recorded the alias.
	if !strings.Contains(out, "folder optimisation: 1 of 1 missed question(s) optimised") {
		t.Errorf("no optimisation report in:\n%s", out)
	}
	oh, orows := readCSV(t, field(t, out, "optimized CSV"))
	alias := orows[2][col(t, oh, "Optimized Reference Document")]
	orig, cp, ok := strings.Cut(alias, "|")
	if !ok || orig != "database/runbooks/log_retention/page_001.md" {
		t.Fatalf("Optimized Reference Document = %q, want original|copy", alias)
	}
	if _, err := os.Stat(filepath.FromSlash(cp)); err != nil {
		t.Errorf("copy %s: %v", cp, err)
	}
	if got := tree(t, filepath.Join(ws, "database")); slices.Equal(got, before) {
		t.Error("the database tree did not change")
	}
	// Seed 000: the input CSV itself got the column, and a backup of it
	// was kept beside it.
	if p := field(t, out, "optimized CSV"); p != "input.csv" {
		t.Errorf("optimized CSV %s; want the input updated", p)
	}
	backups, _ := filepath.Glob("input_backup_*.csv")
	if len(backups) != 1 {
		t.Fatalf("backups %v; want one", backups)
	} else if b, _ := os.ReadFile(backups[0]); string(b) != batchInput {
		t.Errorf("backup differs from the input as it was")
	}
	// The index was refreshed: search finds the copy at once.
	const retention = "ログの保存期間は？"
	if !strings.Contains(out, "index refreshed") || !strings.Contains(mustRun(t, "search", "--k", "20", retention), cp) {
		t.Errorf("after optimize the index does not hold the copy %s", cp)
	}

	manifest := field(t, out, "manifest")
	uout := mustRun(t, "optimize", "--undo", manifest)
	if !strings.Contains(uout, "removed "+cp) {
		t.Errorf("undo output does not name %s:\n%s", cp, uout)
	}
	if !strings.Contains(uout, "index refreshed") || strings.Contains(mustRun(t, "search", "--k", "20", retention), cp) {
		t.Errorf("after undo the index still returns the deleted copy %s", cp)
	}
	if got := tree(t, filepath.Join(ws, "database")); !slices.Equal(got, before) {
		t.Errorf("after undo the database tree is\n%v\nwant\n%v", got, before)
	}

	// The stand-alone command does the same on the results CSV.
	out2 := mustRun(t, "optimize", results)
	m2 := field(t, out2, "manifest")
	mustRun(t, "optimize", "--undo", m2)
	if got := tree(t, filepath.Join(ws, "database")); !slices.Equal(got, before) {
		t.Errorf("after the second undo the database tree is\n%v\nwant\n%v", got, before)
	}

	// --no-optimize leaves the tree alone.
	out3 := mustRun(t, "ask", "input.csv", "--no-optimize", "--logs", "logs")
	if strings.Contains(out3, "manifest:") || !slices.Equal(tree(t, filepath.Join(ws, "database")), before) {
		t.Errorf("--no-optimize changed the database:\n%s", out3)
	}

	// The visible command `batch` is `ask input.csv` under its own name:
	// the same report, apart from the new files' names.
	out4 := mustRun(t, "batch", "input.csv", "--no-optimize", "--logs", "logs")
	files := regexp.MustCompile(`(?m)^(results|summary): .*$`)
	if got, want := files.ReplaceAllString(out4, "$1: F"), files.ReplaceAllString(out3, "$1: F"); got != want {
		t.Errorf("batch input.csv reports\n%s\nask input.csv reports\n%s", got, want)
	}
	if !slices.Equal(tree(t, filepath.Join(ws, "database")), before) {
		t.Error("batch --no-optimize changed the database")
	}
}

// TestBatchHelp: batch evaluation is a command of its own, listed in the
// help, and its help says that it may add page copies to the database
// unless --no-optimize.
func TestBatchHelp(t *testing.T) {
	offlineEnv(t)
	root := mustRun(t, "--help")
	if !regexp.MustCompile(`(?m)^\s+batch\s+.*page copies.*--no-optimize`).MatchString(root) {
		t.Errorf("root help does not list batch with its page-copy warning:\n%s", root)
	}
	help := mustRun(t, "batch", "--help")
	for _, w := range []string{"batch input.csv", "ADDS COPIES", "page\ndatabase", "--no-optimize", "shirube ask input.csv", "--resume", "--workers"} {
		if !strings.Contains(help, w) {
			t.Errorf("batch --help lacks %q:\n%s", w, help)
		}
	}
	if _, _, err := run(t, "", "batch"); err == nil {
		t.Error("batch without an input CSV succeeded")
	}
}

func testOptimizeNeedsInput(t *testing.T) {
	_, _, err := run(t, "", "optimize")
	if err == nil || !strings.Contains(err.Error(), "--undo") {
		t.Errorf("optimize without arguments: %v, want a hint about the results CSV and --undo", err)
	}
}

func testQuestions(t *testing.T, ws string) {
	out := mustRun(t, "questions", "--seed", "3", "-o", "q.csv")
	if !strings.Contains(out, "generator offline") {
		t.Errorf("questions output: %s", out)
	}
	h, rows := readCSV(t, "q.csv")
	if !slices.Equal(h, []string{"Question", "Ground Truth", "Reference Document", "Page", "Checklist", "Generator"}) {
		t.Fatalf("questions header = %v", h)
	}
	if len(rows) < 5 {
		t.Fatalf("%d questions, want several for 7 documents", len(rows))
	}
	ref := col(t, h, "Reference Document")
	negatives := 0
	for _, r := range rows {
		if r[ref] == "" {
			negatives++
			continue
		}
		for _, id := range strings.Split(r[ref], "\n") {
			if _, err := os.Stat(filepath.Join(ws, filepath.FromSlash(id))); err != nil {
				t.Errorf("reference %s is not a page of the database: %v", id, err)
			}
		}
	}
	if negatives == 0 {
		t.Error("no question the documents cannot answer")
	}
}

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

func testEvalDataset(t *testing.T, repo string) {
	copyEvalDataset(t, repo)

	out := mustRun(t, "eval", "eval/eval_dataset.json", "--logs", "logs")
	if !strings.Contains(out, ": PASS — results in ") {
		t.Errorf("offline eval did not pass:\n%s", out)
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
	_, _, err := run(t, "", "eval", "bad.json", "--logs", "logs")
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

func TestConvert(t *testing.T) {
	offlineEnv(t)
	t.Chdir(t.TempDir())
	judgeFiles(t)
	h, rows := readCSV(t, "rag_answers.csv")
	if !slices.Equal(h, []string{"Question Number", "Question", "RAG Answer", "Match Confidence", "Match Score"}) {
		t.Fatalf("header %v", h)
	}
	if len(rows) != 2 || rows[0][0] != "1" || rows[1][0] != "2" || rows[1][2] != "15分以内にチケットを起票します。" {
		t.Errorf("rows %q", rows)
	}
	_, _, err := run(t, "", "convert", "missing_dir")
	var ec exitCode
	if !errors.As(err, &ec) || !strings.HasPrefix(ec.msg, "Error: missing_dir not found") {
		t.Errorf("missing input: %v", err)
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
