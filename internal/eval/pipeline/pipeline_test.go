package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/eval/optimize"
)

func fixedNow() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }

const (
	missed = "database/冷蔵庫/r_h54xg_b/操作と機能/page_008.md"
	found  = "database/冷蔵庫/r_h54xg_b/お手入れ/page_010.md"
)

// asker retrieves the page listed for a question; others retrieve nothing.
type asker map[string]string

func (a asker) Ask(_ context.Context, q string) (batch.AskResult, error) {
	var ret []string
	if p := a[q]; p != "" {
		ret = []string{p}
	}
	return batch.AskResult{Answer: "答え: " + q, Retrieved: ret}, nil
}

// workspace writes the page database and the input CSV and returns the
// folder and the input's path.
func workspace(t *testing.T, header []string, rows [][]string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{missed, found, "database/温度設定/page_001.md"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("# "+filepath.Base(p)+"\n温度設定の手順。"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	input := filepath.Join(dir, "qa.csv")
	if err := csvx.WriteFile(input, header, rows); err != nil {
		t.Fatal(err)
	}
	return dir, input
}

// run runs the pipeline over the workspace and counts the calls of the
// optimisation's settings and of the refresh.
func run(t *testing.T, dir, input string, a asker, noOpt, rl bool) (Result, string, []string, int, int) {
	t.Helper()
	var out bytes.Buffer
	var warns []string
	optCalls, refreshes := 0, 0
	res, err := Run(t.Context(), Options{
		Batch:      batch.Options{Input: input, OutputDir: filepath.Join(dir, "results"), Workers: 2, Asker: a, Now: fixedNow},
		NoOptimize: noOpt,
		EnableRL:   rl,
		Optimize: func() optimize.Options {
			optCalls++
			return optimize.Options{Root: dir, Scope: "database", Proposer: optimize.OfflineProposer{Tokenizer: optimize.TermTokenizer{}}, Now: fixedNow}
		},
		Refresh: func(context.Context) error { refreshes++; return nil },
		Out:     &out,
		Warn:    func(s string) { warns = append(warns, s) },
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	return res, out.String(), warns, optCalls, refreshes
}

func TestRunQuestionsOnly(t *testing.T) {
	dir, input := workspace(t, []string{"Question"}, [][]string{{"温度設定は？"}})
	res, out, warns, optCalls, _ := run(t, dir, input, asker{}, false, true)
	if res.Batch.Evaluated || res.Optimized || optCalls != 0 {
		t.Errorf("evaluated %v, optimised %v, %d optimisation set-ups; want none", res.Batch.Evaluated, res.Optimized, optCalls)
	}
	if !strings.Contains(out, "answered 1 rows (0 resumed, 0 failed, 0 without a question)") || strings.Contains(out, "summary:") {
		t.Errorf("report:\n%s", out)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "--enable-rl needs ground truth") {
		t.Errorf("warnings %q", warns)
	}
}

func TestRunOptimisesMissedPages(t *testing.T) {
	header := []string{"Question", "Ground Truth", "Reference Document"}
	rows := [][]string{{"温度設定の手順は？", "設定ボタン", missed}, {"お手入れは？", "拭く", found}}
	a := asker{"お手入れは？": found}

	dir, input := workspace(t, header, rows)
	res, out, _, optCalls, refreshes := run(t, dir, input, a, false, false)
	if !res.Optimized || optCalls != 1 || refreshes != 1 || res.Optimize.Manifest == "" {
		t.Fatalf("optimised %v, %d set-ups, %d refreshes, manifest %q; want one optimisation and one refresh\n%s", res.Optimized, optCalls, refreshes, res.Optimize.Manifest, out)
	}
	for _, w := range []string{"summary: ", "Ref Recall", "(rows 2)", "folder optimisation: 1 of 1 missed question(s) optimised", "undo with: shirube optimize --undo"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
	h, got, _, err := csvx.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	if c := csvx.MatchColumn(h, batch.ColOptimized); c < 0 || !strings.Contains(got[0][c], missed+"|") {
		t.Errorf("input CSV not updated with the copy: %q %q", h, got)
	}

	// --no-optimize: the same run stops after the summary.
	dir, input = workspace(t, header, rows)
	res, out, _, optCalls, refreshes = run(t, dir, input, a, true, false)
	if res.Optimized || optCalls != 0 || refreshes != 0 || strings.Contains(out, "folder optimisation") {
		t.Errorf("--no-optimize optimised: %v, %d set-ups, %d refreshes\n%s", res.Optimized, optCalls, refreshes, out)
	}
}

func TestRunNothingToOptimise(t *testing.T) {
	dir, input := workspace(t, []string{"Question", "Reference Document"}, [][]string{{"お手入れは？", found}})
	res, out, _, optCalls, refreshes := run(t, dir, input, asker{"お手入れは？": found}, false, false)
	if res.Optimized || optCalls != 0 || refreshes != 0 {
		t.Errorf("optimised %v with %d set-ups and %d refreshes", res.Optimized, optCalls, refreshes)
	}
	if !strings.Contains(out, "every question found its reference pages; nothing to optimise") {
		t.Errorf("report:\n%s", out)
	}
}
