package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/llmtest"
)

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
	// The copy is not put in another document's page folder (it once
	// became database/manuals/vpn_manual/page_001_2.md), and its new
	// folder is named after whole words of the question, not fragments.
	if cp != "database/公衆無線lan_vpn/page_001.md" {
		t.Errorf("copy %s; want database/公衆無線lan_vpn/page_001.md (a new folder of whole words, outside every document's folder)", cp)
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
	if ask := mustRun(t, "ask", "--help"); !strings.Contains(ask, "page copies to the page database unless --no-optimize") {
		t.Errorf("ask --help does not warn that ask input.csv may add page copies:\n%s", ask)
	}
	if _, _, err := run(t, "", "batch"); err == nil {
		t.Error("batch without an input CSV succeeded")
	}
}

// testBatchPartialAnswer: batch with an LLM generator whose answer states
// the checklist fact and then names a part the documents do not cover. A
// partial answer is an answer (issue 22): the row scores TP 1, FN 0, not as
// a refusal.
func testBatchPartialAnswer(t *testing.T) {
	const partial = "連続接続は最長12時間までとなる [1]。なお、料金については記載がありません。"
	fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.System, "checklist of key points") {
			return llmtest.Reply{Text: `{"items":[{"index":1,"present":true}],"extra_points":[],"reason":"states the limit"}`}
		}
		if rf, _ := r.Body["response_format"].(map[string]any); rf["type"] == "json_object" {
			return llmtest.Reply{Text: `{"claims":[{"n":1,"supported":true,"evidence":[1]}]}`}
		}
		return llmtest.Reply{Text: partial, Model: "gpt-4o-mini"}
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	const in = "Question,Ground Truth,Reference Document,Page,Checklist\n" +
		"VPNの連続接続は最長何時間ですか？料金は？,最長12時間,database/manuals/vpn_manual/page_001.md,1,- 最長12時間\n"
	if err := os.WriteFile("partial.csv", []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "batch", "partial.csv", "--no-optimize", "--logs", "logs")
	header, rows := readCSV(t, field(t, out, "results"))
	if len(rows) != 1 {
		t.Fatalf("results have %d rows, want 1", len(rows))
	}
	r := rows[0]
	if a := r[col(t, header, "RAG Answer")]; !strings.Contains(a, "最長12時間") {
		t.Fatalf("RAG Answer %q: the generator's answer did not reach the row", a)
	}
	// Every row names its generator and its checklist judge.
	if g, j := r[col(t, header, "Generator")], r[col(t, header, "Checklist Judge")]; !strings.HasPrefix(g, "llm:") || !strings.HasPrefix(j, "llm") {
		t.Errorf("row generator %q, judge %q; want the model named for both", g, j)
	}
	tp, fn, recall := r[col(t, header, "Checklist TP")], r[col(t, header, "Checklist FN")], r[col(t, header, "Checklist Recall")]
	if tp != "1" || fn != "0" || recall != "1" {
		t.Errorf("partial answer scored TP %s FN %s Recall %s (reason %q); want 1, 0, 1",
			tp, fn, recall, r[col(t, header, "Evaluation Reason")])
	}
}

// testBatchCommaReference: a Reference Document cell that lists two pages
// separated by a comma is read as two pages, not as one path that exists
// nowhere (issue 22).
func testBatchCommaReference(t *testing.T) {
	const in = "Question,Ground Truth,Reference Document,Page,Checklist\n" +
		"アカウントロックアウトのしきい値は何回ですか？,連続10回,\"database/runbooks/account_lockout/page_001.md, database/runbooks/backup_restore/page_001.md\",1,- 10回\n"
	if err := os.WriteFile("comma.csv", []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "batch", "comma.csv", "--no-optimize", "--logs", "logs")
	header, rows := readCSV(t, field(t, out, "results"))
	r := rows[0]
	reason := r[col(t, header, "Evaluation Reason")]
	if !strings.Contains(reason, "/2 relevant page(s) retrieved") || r[col(t, header, "Ref TP")] == "0" {
		t.Errorf("comma-separated reference: Ref TP %s, reason %q; want two pages, the lockout page found",
			r[col(t, header, "Ref TP")], reason)
	}
}

// testBatchModelDown: batch with an LLM generator whose every call fails.
// The assistant answers extractively; the row is a failed row saying the
// requested model was not used, not scored as the model's answer.
func testBatchModelDown(t *testing.T) {
	fake := llmtest.OpenAI(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 500, RetryAfter: "0", ErrorMessage: "model overloaded"}
	})
	t.Setenv("OPENAI_API_KEY", "sk-test-0123456789")
	t.Setenv("OPENAI_API_BASE", fake.BaseURL())
	const in = "Question,Ground Truth,Reference Document,Page,Checklist\n" +
		"アカウントロックアウトのしきい値は何回ですか？,連続10回,database/runbooks/account_lockout/page_001.md,1,- 10回\n"
	os.WriteFile("down.csv", []byte(in), 0o644)
	out, _, _ := run(t, "", "batch", "down.csv", "--no-optimize", "--logs", "logs")
	header, rows := readCSV(t, field(t, out, "results"))
	r := rows[0]
	if reason := r[col(t, header, "Evaluation Reason")]; !strings.Contains(reason, "requested model was not used") || r[col(t, header, "Checklist TP")] != "" {
		t.Errorf("row with the model down: reason %q, TP %q; want a failed row naming the unused model", reason, r[col(t, header, "Checklist TP")])
	}
	if g := r[col(t, header, "Generator")]; g != "extractive" {
		t.Errorf("generator %q; want extractive named", g)
	}
}
