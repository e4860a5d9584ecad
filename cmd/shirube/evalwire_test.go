package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/guard"
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
	t.Run("BatchPartialAnswer", func(t *testing.T) { workspace(t, fixture); testBatchPartialAnswer(t) })
	t.Run("BatchModelDown", func(t *testing.T) { workspace(t, fixture); testBatchModelDown(t) })
	t.Run("BatchCommaReference", func(t *testing.T) { workspace(t, fixture); testBatchCommaReference(t) })
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
	t.Run("SeedLoginQuestion", func(t *testing.T) { workspace(t, fixture); testSeedLoginQuestion(t) })
	t.Run("EvalDataset", func(t *testing.T) { workspace(t, fixture); testEvalDataset(t, repo) })
	t.Run("EvalJudgeDown", func(t *testing.T) { workspace(t, fixture); testEvalJudgeDown(t, repo) })
	t.Run("EvalLenientJudge", func(t *testing.T) { workspace(t, fixture); testEvalLenientJudge(t, repo) })
	t.Run("DiffEval", func(t *testing.T) { workspace(t, fixture); testDiffEval(t) })
	t.Run("DiffEvalModelDown", func(t *testing.T) { workspace(t, fixture); testDiffEvalModelDown(t) })
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

// testSeedLoginQuestion asks seed 002's own example question on the demo
// corpus with the CLI's defaults and with the plain path. The corpus has no
// page about logging in: the lockout runbook says ログオン and ロックアウト.
// The question names one thing (ログイン), the reader finds the sentences
// an answer would quote not answering it, so it is asked back with the
// clarification template, listing the documents that name ログイン or a
// synonym of it — the lockout runbook among them — instead of quoting an
// unrelated triage sentence.
func testSeedLoginQuestion(t *testing.T) {
	const q = "ログインできない場合の対処法は？"
	for _, args := range [][]string{{"ask", "--json", q}, {"ask", "--json", "--profile", "plain", q}} {
		var rep assistant.Reply
		if err := json.Unmarshal([]byte(mustRun(t, args...)), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Decision.Action != assistant.ActionClarify || rep.Decision.Reason != assistant.ReasonVague || !rep.Flags.AmbiguousQuery {
			t.Errorf("%v: decision %+v, flags %+v, want it asked back", args, rep.Decision, rep.Flags)
		}
		if !strings.HasPrefix(rep.Answer, guard.AmbiguousQueryResponse) || !strings.Contains(rep.Answer, "runbooks/account_lockout.md") {
			t.Errorf("%v: answer\n%s", args, rep.Answer)
		}
		cited := false
		for _, e := range rep.Evidence {
			cited = cited || strings.Contains(e.File, "account_lockout") && strings.Contains(e.Excerpt, "ログオン")
			if strings.Contains(e.Excerpt, "真陽性") {
				t.Errorf("%v: cites the triage sentence %q", args, e.Excerpt)
			}
		}
		if !cited {
			t.Errorf("%v: evidence %+v does not cite the lockout runbook's ログオン", args, rep.Evidence)
		}
	}
}
