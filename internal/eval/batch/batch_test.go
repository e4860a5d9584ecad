package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/golden"
)

// fixedNow is the clock of every test: file names end in 20250102_030405.
func fixedNow() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }

// mapAsker answers from a table; unknown questions fail.
type mapAsker struct {
	answers map[string]AskResult
	errs    map[string]error
}

func (m mapAsker) Ask(_ context.Context, q string) (AskResult, error) {
	if err, ok := m.errs[q]; ok {
		return AskResult{}, err
	}
	a, ok := m.answers[q]
	if !ok {
		return AskResult{}, fmt.Errorf("unexpected question %q", q)
	}
	return a, nil
}

func writeInput(t *testing.T, dir, name string, header []string, rows [][]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	var b bytes.Buffer
	w := csvx.NewWriter(&b)
	for _, r := range append([][]string{header}, rows...) {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readOutput(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	h, rows, warn, err := csvx.ReadFile(path)
	if err != nil || warn != "" {
		t.Fatalf("read %s: %v %s", path, err, warn)
	}
	return h, rows
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

// TestRunEndToEnd evaluates four rows whose metrics are worked out by hand
// below; the golden files pin the exact bytes of both CSVs.
func TestRunEndToEnd(t *testing.T) {
	dir := t.TempDir()
	header := []string{"Question", "Ground Truth", "Reference Document", "Page", "Checklist", "Optimized Reference Document", "Notes"}
	input := writeInput(t, dir, "qa.csv", header, [][]string{
		{"インシデント発生時の初動は？", "影響範囲を確認し管理者に報告する", "database/sec/page_001.md", "1", "- 影響範囲を確認する\n- 管理者に報告する", "", "n1"},
		{"VPNの設定手順は？", "クライアントを起動して証明書を選ぶ", "database/net/page_002.md", "2", "・VPNクライアントを起動する\n・証明書を選択する", "database/net/page_002.md|database/net/vpn/page_002.md", "n2"},
		{"社食のメニューは？", "", "", "", "", "", "n3"},
		{"=cmd|' /C calc'!A0", "x", "database/net/page_001.md", "1", "- x", "", "-x"},
	})
	asker := mapAsker{
		answers: map[string]AskResult{
			"インシデント発生時の初動は？": {
				Answer:    "まず影響範囲の確認を行います。\n次に管理者へ報告してください。",
				Retrieved: []string{"database/sec/page_001.md", `database\net\page_001.md`},
			},
			"VPNの設定手順は？": {
				Answer:    "VPNクライアントを起動します。",
				Retrieved: []string{"./database/net/vpn/page_002.md"},
			},
			"社食のメニューは？": {Answer: "該当する手順が見つかりませんでした。", Refused: true},
		},
		errs: map[string]error{"=cmd|' /C calc'!A0": errors.New("backend down")},
	}
	pages := []string{"database/net/page_001.md", "database/net/page_002.md", "database/net/vpn/page_002.md", "database/sec/page_001.md", "database/sec/page_002.md"}
	var log bytes.Buffer
	res, err := Run(t.Context(), Options{
		Input:     input,
		OutputDir: filepath.Join(dir, "results"),
		Asker:     asker,
		AllPages:  func() []string { return pages },
		Log:       &log,
		Now:       fixedNow,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "results", "qa_results_20250102_030405.csv"); res.Output != want {
		t.Errorf("Output = %s; want %s", res.Output, want)
	}
	if want := filepath.Join(dir, "results", "qa_results_20250102_030405_summary.csv"); res.Summary != want {
		t.Errorf("Summary = %s; want %s", res.Summary, want)
	}
	if res.Rows != 4 || res.Failed != 1 || !res.Evaluated {
		t.Errorf("Result = %+v", res)
	}
	h, rows := readOutput(t, res.Output)
	col := func(r int, name string) string {
		t.Helper()
		i := csvx.MatchColumn(h, name)
		if i < 0 {
			t.Fatalf("no column %q", name)
		}
		return rows[r][i]
	}
	// Row 1: both items found, no extra sentence → TP=2 FP=0 FN=0, R=P=F1=Acc=1,
	// Spec undefined. Universe = 1 group + 4 other pages = 5; TP=1, FP=1
	// (net/page_001), TN=3: P=1/2, Spec=3/4, F1=2/3, Acc=4/5.
	// Row 2: item 1 found (vpn, クラ..ント, 起動), item 2 not → R=1/2, P=1, F1=2/3, Acc=1/2.
	// Reference missed, the copy counts as FP: TP=0 FN=1 FP=1 TN=3, Acc=3/5.
	// With the alias group the copy is a hit: universe 4, all metrics 1.
	// Row 3: no reference and a refusal → Checklist TN=1, Acc=1, Spec=1;
	// Ref TN=5 of 5 pages, Spec=1, Acc=1, recall/precision/F1 undefined.
	// Row 4: the Asker failed → only the reason.
	want := map[string][]string{
		"Checklist TP":          {"2", "1", "0", ""},
		"Checklist FN":          {"0", "1", "0", ""},
		"Checklist TN":          {"0", "0", "1", ""},
		"Checklist Recall":      {"1", "0.5", "", ""},
		"Checklist F1":          {"1", "0.6667", "", ""},
		"Checklist Accuracy":    {"1", "0.5", "1", ""},
		"Checklist Specificity": {"", "", "1", ""},
		"Ref TP":                {"1", "0", "0", ""},
		"Ref TN":                {"3", "3", "5", ""},
		"Ref FP":                {"1", "1", "0", ""},
		"Ref Precision":         {"0.5", "0", "", ""},
		"Ref Specificity":       {"0.75", "0.75", "1", ""},
		"Ref F1":                {"0.6667", "0", "", ""},
		"Ref Accuracy":          {"0.8", "0.6", "1", ""},
		"Opt Ref Recall":        {"1", "1", "", ""},
		"Opt Ref TN":            {"3", "3", "5", ""},
		"Opt Ref Accuracy":      {"0.8", "1", "1", ""},
		"Retrieved Files":       {"database/sec/page_001.md\ndatabase/net/page_001.md", "database/net/vpn/page_002.md", "", ""},
		"Evaluation Reason":     {"checklist: 2/2 checklist items found; reference: 1/1 relevant page(s) retrieved", "checklist: 1/2 checklist items found; missing: 証明書を選択する; reference: 0/1 relevant page(s) retrieved", "checklist: no reference and the agent correctly refused (TN); reference: none given", "error: backend down"},
		"Question":              {"インシデント発生時の初動は？", "VPNの設定手順は？", "社食のメニューは？", "=cmd|' /C calc'!A0"},
		"Notes":                 {"n1", "n2", "n3", "-x"},
	}
	for name, cells := range want {
		for r, w := range cells {
			if got := col(r, name); got != w {
				t.Errorf("row %d %s = %q; want %q", r+1, name, got, w)
			}
		}
	}
	// Summary means, by hand: Checklist Recall (1+0.5)/2, Checklist F1
	// (1+2/3)/2 from unrounded values, Ref Specificity (0.75+0.75+1)/3,
	// Ref TN (3+3+5)/3, Opt Ref Accuracy (0.8+1+1)/3.
	_, srows := readOutput(t, res.Summary)
	sum := map[string][]string{}
	for _, r := range srows {
		sum[r[0]] = r[1:]
	}
	for name, w := range map[string][]string{
		"Checklist Recall":      {"0.75", "2"},
		"Checklist F1":          {"0.8333", "2"},
		"Checklist Specificity": {"1", "1"},
		"Ref Specificity":       {"0.8333", "3"},
		"Ref TN":                {"3.6667", "3"},
		"Opt Ref Accuracy":      {"0.9333", "3"},
	} {
		if !reflect.DeepEqual(sum[name], w) {
			t.Errorf("summary %s = %q; want %q", name, sum[name], w)
		}
	}
	out, _ := os.ReadFile(res.Output)
	checkGolden(t, "e2e_results.golden.csv", string(out))
	s, _ := os.ReadFile(res.Summary)
	checkGolden(t, "e2e_summary.golden.csv", string(s))
	// The failed row keeps the checkpoint for a resumed retry.
	if _, err := os.Stat(checkpointPath(filepath.Join(dir, "results"), "qa")); err != nil {
		t.Errorf("checkpoint removed although a row failed: %v", err)
	}
}

// TestRunExcelSafe checks formula escaping and newlines in the raw bytes.
func TestRunExcelSafe(t *testing.T) {
	dir := t.TempDir()
	input := writeInput(t, dir, "q.csv", []string{"Question"}, [][]string{{"+1 と -1 の違い"}})
	asker := mapAsker{answers: map[string]AskResult{
		"+1 と -1 の違い": {Answer: "=1+1\n二行目", Retrieved: []string{"@a.md", "b.md"}},
	}}
	res, err := Run(t.Context(), Options{Input: input, OutputDir: filepath.Join(dir, "results"), Asker: asker, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(res.Output)
	want := "\uFEFFQuestion,RAG Answer,Retrieved Files,Evaluation Reason\n'+1 と -1 の違い,\"'=1+1\n二行目\",\"'@a.md\nb.md\",\n"
	if string(raw) != want {
		t.Errorf("raw output\n%q\nwant\n%q", raw, want)
	}
	_, rows := readOutput(t, res.Output)
	if got := rows[0]; !reflect.DeepEqual(got, []string{"+1 と -1 の違い", "=1+1\n二行目", "@a.md\nb.md", ""}) {
		t.Errorf("read back %q", got)
	}
	if res.Summary != "" {
		t.Errorf("summary written for a Question-only run: %s", res.Summary)
	}
}

// slowAsker answers "A:"+q after a random pause and counts every call.
type slowAsker struct {
	mu    sync.Mutex
	calls map[string]int
	seed  uint64
}

func (s *slowAsker) Ask(ctx context.Context, q string) (AskResult, error) {
	s.mu.Lock()
	s.calls[q]++
	s.seed++
	d := time.Duration(rand.New(rand.NewPCG(s.seed, 7)).IntN(3000)) * time.Microsecond
	s.mu.Unlock()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return AskResult{}, ctx.Err()
	}
	return AskResult{Answer: "A:" + q, Retrieved: []string{q + ".md"}}, nil
}

func questions(n int) [][]string {
	rows := make([][]string, n)
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("q%03d", i), fmt.Sprintf("extra%d", i)}
	}
	return rows
}

func TestRunParallelKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	const n = 60
	input := writeInput(t, dir, "many.csv", []string{"question", "Tag"}, questions(n))
	asker := &slowAsker{calls: map[string]int{}}
	var prog bytes.Buffer
	res, err := Run(t.Context(), Options{Input: input, OutputDir: filepath.Join(dir, "results"), Workers: 5, Asker: asker, Progress: &prog, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	h, rows := readOutput(t, res.Output)
	if want := []string{"Question", "RAG Answer", "Retrieved Files", "Evaluation Reason", "Tag"}; !reflect.DeepEqual(h, want) {
		t.Errorf("header %q; want %q", h, want)
	}
	if len(rows) != n {
		t.Fatalf("%d rows; want %d", len(rows), n)
	}
	for i, r := range rows {
		q := fmt.Sprintf("q%03d", i)
		if r[0] != q || r[1] != "A:"+q || r[2] != q+".md" || r[4] != fmt.Sprintf("extra%d", i) {
			t.Errorf("row %d = %q", i, r)
		}
		if asker.calls[q] != 1 {
			t.Errorf("%s asked %d times", q, asker.calls[q])
		}
	}
	if got := strings.Count(prog.String(), "\n"); got != n {
		t.Errorf("%d progress lines; want %d", got, n)
	}
	if !strings.Contains(prog.String(), fmt.Sprintf("[%d/%d]", n, n)) {
		t.Errorf("no final progress line in %q", prog.String())
	}
	if _, err := os.Stat(checkpointPath(filepath.Join(dir, "results"), "many")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint left after success: %v", err)
	}
}

// cancellingAsker cancels the run once `after` questions were answered and
// records which questions it answered.
type cancellingAsker struct {
	mu       sync.Mutex
	after    int
	cancel   context.CancelFunc
	answered map[string]bool
}

func (c *cancellingAsker) Ask(ctx context.Context, q string) (AskResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answered) >= c.after {
		c.cancel()
		return AskResult{}, ctx.Err()
	}
	c.answered[q] = true
	return AskResult{Answer: "A:" + q}, nil
}

func TestRunResume(t *testing.T) {
	dir := t.TempDir()
	const n = 20
	input := writeInput(t, dir, "r.csv", []string{"Question", "Tag"}, questions(n))
	out := filepath.Join(dir, "results")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	first := &cancellingAsker{after: 7, cancel: cancel, answered: map[string]bool{}}
	_, err := Run(ctx, Options{Input: input, OutputDir: out, Workers: 5, Asker: first, Now: fixedNow})
	if err == nil || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("interrupted run: err = %v; want a hint to resume", err)
	}
	if len(first.answered) != 7 {
		t.Fatalf("first run answered %d; want 7", len(first.answered))
	}
	if m, _ := filepath.Glob(filepath.Join(out, "r_results_*.csv")); len(m) != 0 {
		t.Errorf("interrupted run wrote %v", m)
	}

	second := &slowAsker{calls: map[string]int{}}
	res, err := Run(t.Context(), Options{Input: input, OutputDir: out, Workers: 5, Asker: second, Resume: true, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 7 {
		t.Errorf("Resumed = %d; want 7", res.Resumed)
	}
	for q := range first.answered {
		if second.calls[q] != 0 {
			t.Errorf("%s asked again after resume", q)
		}
	}
	if len(second.calls) != n-7 {
		t.Errorf("second run asked %d questions; want %d", len(second.calls), n-7)
	}
	_, rows := readOutput(t, res.Output)
	for i, r := range rows {
		if q := fmt.Sprintf("q%03d", i); r[0] != q || r[1] != "A:"+q {
			t.Errorf("row %d = %q", i, r)
		}
	}
	if _, err := os.Stat(checkpointPath(out, "r")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint left after success: %v", err)
	}
}

func TestRunResumeIgnoresBadCheckpointLines(t *testing.T) {
	dir := t.TempDir()
	input := writeInput(t, dir, "c.csv", []string{"Question"}, questions(3))
	out := filepath.Join(dir, "results")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cp := `{"row":0,"question":"q000","cells":{"RAG Answer":"saved"}}` + "\n" +
		`{"row":1,"question":"edited","cells":{"RAG Answer":"stale"}}` + "\n" +
		`{"row":2,"quest` // cut short by a crash
	if err := os.WriteFile(checkpointPath(out, "c"), []byte(cp), 0o644); err != nil {
		t.Fatal(err)
	}
	asker := &slowAsker{calls: map[string]int{}}
	var log bytes.Buffer
	res, err := Run(t.Context(), Options{Input: input, OutputDir: out, Asker: asker, Resume: true, Log: &log, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "2 unusable line(s)") {
		t.Errorf("log %q", log.String())
	}
	_, rows := readOutput(t, res.Output)
	if got := []string{rows[0][1], rows[1][1], rows[2][1]}; !reflect.DeepEqual(got, []string{"saved", "A:q001", "A:q002"}) {
		t.Errorf("answers %q", got)
	}
}

func TestRunNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	input := writeInput(t, dir, "o.csv", []string{"Question"}, questions(1))
	out := filepath.Join(dir, "results")
	var paths []string
	for range 2 {
		res, err := Run(t.Context(), Options{Input: input, OutputDir: out, Asker: &slowAsker{calls: map[string]int{}}, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(res.Output))
	}
	if want := []string{"o_results_20250102_030405.csv", "o_results_20250102_030405_2.csv"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("outputs %q; want %q", paths, want)
	}
}

func TestRunInputErrors(t *testing.T) {
	dir := t.TempDir()
	noQ := writeInput(t, dir, "x.csv", []string{"Frage"}, [][]string{{"a"}})
	if _, err := Run(t.Context(), Options{Input: noQ, Asker: mapAsker{}}); err == nil || !strings.Contains(err.Error(), "Question") {
		t.Errorf("missing column: err = %v", err)
	}
	if _, err := Run(t.Context(), Options{Input: filepath.Join(dir, "missing.csv"), Asker: mapAsker{}}); err == nil {
		t.Error("missing file: no error")
	}
}
